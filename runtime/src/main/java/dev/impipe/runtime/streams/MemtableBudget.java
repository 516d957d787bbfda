package dev.impipe.runtime.streams;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * One budget for the RocksDB memtables of every budgeted store of the process: when the writes the stores hold in
 * memory pass it, the stream thread that wrote them flushes its largest stores to disk until they are under three
 * quarters of it.
 *
 * <p>Why not RocksDB's write-buffer manager: it flushes only the store being written, never an idle one. Under
 * exactly-once Kafka Streams never flushes a store while it runs (only at a clean close), so once idle stores hold the
 * budget (the ACK wheel after a burst of timers, the delay app's segments of other hours) every write to an active
 * store flushed that store's nearly empty memtable and writes stalled (bench scale: 330 schedules/s instead of 80k/s).
 * Without any manager each of the ~1,200 RocksDB instances of a delay app (two stores x partitions x hour segments)
 * keeps its memtables until they fill: 926 MB of memtables after 10M timers + 10M schedules.
 *
 * <p>The amount held is an estimate made from what the wrappers see written since their last flush (key + value + a
 * fixed per-entry overhead); RocksDB's own flush of a full memtable is not seen, so the estimate only errs high, which
 * at worst flushes a store early. A flush moves a store's memtables to disk ({@link RocksDBFlusher}), the same thing
 * RocksDB does by itself whenever a memtable fills. Only the thread that last wrote a store flushes it (a window
 * store's segments are created and dropped by that thread), and under the store's own monitor, so a flush never meets
 * a closed store; a thread checks at most every {@value #CHECK_INTERVAL_MS} ms, on any call to a budgeted store, and
 * only while the budget is exceeded. A store whose thread stops calling it (an app with neither input nor
 * punctuations) keeps what it holds until that thread comes back.
 */
public final class MemtableBudget {

  /** RocksDB's memtable entry overhead beyond key and value (skip-list node, sequence number, lengths), rounded up. */
  static final long ENTRY_OVERHEAD = 48;
  /** Least time between two relief checks of one thread. */
  static final long CHECK_INTERVAL_MS = 100;
  /** Where a store's estimate stops growing: RocksDB flushes a memtable that fills (16 MB) by itself. */
  static final long STORE_CAP = 64L << 20;
  /** The Streams property carrying the budget in bytes (set by the runtime from {@code IM_ROCKSDB_MEMORY}). */
  public static final String CONFIG_BYTES = "im.rocksdb.memtable.bytes";

  private static final MemtableBudget SHARED = new MemtableBudget(System::currentTimeMillis);

  private final LongSupplier clock;
  private final AtomicLong held = new AtomicLong();
  private final AtomicLong flushes = new AtomicLong();
  private final Set<Tracked> stores = ConcurrentHashMap.newKeySet();
  private final ThreadLocal<long[]> lastCheck = ThreadLocal.withInitial(() -> new long[] {Long.MIN_VALUE});
  /** 0 until a store is initialised with a budget; the first one sets it for the process. */
  private volatile long limit;

  MemtableBudget(LongSupplier clock) {
    this.clock = clock;
  }

  /** {@code supplier}'s stores, with their memtables counted against the process-wide budget. */
  public static KeyValueBytesStoreSupplier keyValue(KeyValueBytesStoreSupplier supplier) {
    return SHARED.budgeted(supplier);
  }

  /** {@code supplier}'s stores (all segments together), counted against the process-wide budget. */
  public static WindowBytesStoreSupplier window(WindowBytesStoreSupplier supplier) {
    return SHARED.budgeted(supplier);
  }

  KeyValueBytesStoreSupplier budgeted(KeyValueBytesStoreSupplier supplier) {
    return new BudgetedKeyValueSupplier(supplier, this);
  }

  WindowBytesStoreSupplier budgeted(WindowBytesStoreSupplier supplier) {
    return new BudgetedWindowSupplier(supplier, this);
  }

  /** Bytes the budgeted stores are estimated to hold in memtables. */
  public long held() {
    return held.get();
  }

  /** Flushes this budget has made since the process started. */
  public long flushes() {
    return flushes.get();
  }

  /** Sets the budget if none is set yet (the first store of the process decides, like the shared block cache). */
  synchronized void limitIfUnset(long bytes) {
    if (limit == 0 && bytes > 0) {
      limit = bytes;
    }
  }

  /** The budget from a store's app configs ({@link #CONFIG_BYTES}); none when absent. */
  void configure(StateStoreContext context) {
    Object configured = context.appConfigs().get(CONFIG_BYTES);
    if (configured != null) {
      limitIfUnset(Long.parseLong(configured.toString()));
    }
  }

  Tracked track(StateStore store) {
    Tracked t = new Tracked(store);
    stores.add(t);
    return t;
  }

  /** One budgeted store: what it is estimated to hold, and which thread wrote it last. */
  final class Tracked {
    private final StateStore inner;
    private volatile Thread owner;
    private volatile long estimate;
    private boolean closed;

    Tracked(StateStore inner) {
      this.inner = inner;
    }

    /** {@code key} and {@code value} bytes were written (value 0 for a delete). */
    void wrote(long keyBytes, long valueBytes) {
      long add = keyBytes + valueBytes + ENTRY_OVERHEAD;
      synchronized (this) {
        owner = Thread.currentThread();
        long before = estimate;
        long after = Math.min(STORE_CAP, before + add);
        estimate = after;
        held.addAndGet(after - before);
      }
      relieve();
    }

    /** Any other call: the thread may take its turn at relieving the budget. */
    void touched() {
      relieve();
    }

    /** Closes the store; under this store's lock, so a flush never overlaps it. */
    synchronized void close() {
      closed = true;
      held.addAndGet(-estimate);
      estimate = 0;
      stores.remove(this);
      inner.close();
    }

    long estimate() {
      return estimate;
    }

    /** Flushes the store's memtables to disk (see {@link RocksDBFlusher}). */
    synchronized void flush() {
      if (closed || estimate == 0) {
        return;
      }
      RocksDBFlusher.flush(inner);
      held.addAndGet(-estimate);
      estimate = 0;
      flushes.incrementAndGet();
    }
  }

  /** While over budget, at most every {@link #CHECK_INTERVAL_MS}: flush this thread's largest stores. */
  void relieve() {
    long max = limit;
    if (max == 0 || held.get() <= max) {
      return;
    }
    long now = clock.getAsLong();
    long[] last = lastCheck.get();
    if (last[0] != Long.MIN_VALUE && now - last[0] < CHECK_INTERVAL_MS) {
      return;
    }
    last[0] = now;
    Thread me = Thread.currentThread();
    List<Tracked> mine = new ArrayList<>();
    for (Tracked t : stores) {
      if (t.owner == me && t.estimate() > 0) {
        mine.add(t);
      }
    }
    mine.sort(Comparator.comparingLong(Tracked::estimate).reversed());
    long target = max / 4 * 3;
    for (Tracked t : mine) {
      if (held.get() <= target) {
        break;
      }
      t.flush();
    }
  }
}
