package dev.impipe.runtime.streams;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * The store wrappers of {@link MemtableBudget}: every call goes to the Kafka Streams store inside; writes are counted,
 * and any call lets the thread relieve the budget.
 */
final class BudgetedStores {

  private BudgetedStores() {}

  /** What both wrappers share: the inner store's life cycle and offsets, and the budget's bookkeeping. */
  abstract static class Budgeted implements StateStore {
    private final StateStore inner;
    private final MemtableBudget budget;
    MemtableBudget.Tracked tracked;

    Budgeted(StateStore inner, MemtableBudget budget) {
      this.inner = inner;
      this.budget = budget;
    }

    @Override
    public String name() {
      return inner.name();
    }

    /** The Kafka Streams store inside. */
    StateStore inner() {
      return inner;
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
      inner.init(context, root);
      budget.configure(context);
      tracked = budget.track(inner);
    }

    @Override
    @SuppressWarnings("deprecation")
    public void flush() {
      inner.flush();
    }

    @Override
    public void commit(Map<TopicPartition, Long> changelogOffsets) {
      inner.commit(changelogOffsets);
    }

    @Override
    public Long committedOffset(TopicPartition partition) {
      return inner.committedOffset(partition);
    }

    @Override
    @SuppressWarnings("deprecation") // Kafka Streams still asks it of every store (KIP-1035)
    public boolean managesOffsets() {
      return inner.managesOffsets();
    }

    @Override
    public void close() {
      if (tracked == null) {
        inner.close();
      } else {
        tracked.close();
      }
    }

    @Override
    public boolean persistent() {
      return inner.persistent();
    }

    @Override
    public boolean isOpen() {
      return inner.isOpen();
    }

    @Override
    public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
      return inner.query(query, positionBound, config);
    }

    @Override
    public Position getPosition() {
      return inner.getPosition();
    }

    void wrote(Bytes key, byte[] value) {
      tracked.wrote(key.get().length, value == null ? 0 : value.length);
    }

    <T> T read(T result) {
      tracked.touched();
      return result;
    }
  }

  static final class KeyValueSupplier implements KeyValueBytesStoreSupplier {
    private final KeyValueBytesStoreSupplier inner;
    private final MemtableBudget budget;

    KeyValueSupplier(KeyValueBytesStoreSupplier inner, MemtableBudget budget) {
      this.inner = inner;
      this.budget = budget;
    }

    @Override
    public String name() {
      return inner.name();
    }

    @Override
    public KeyValueStore<Bytes, byte[]> get() {
      return new BudgetedKeyValueStore(inner.get(), budget);
    }

    @Override
    public String metricsScope() {
      return inner.metricsScope();
    }
  }

  static final class WindowSupplier implements WindowBytesStoreSupplier {
    private final WindowBytesStoreSupplier inner;
    private final MemtableBudget budget;

    WindowSupplier(WindowBytesStoreSupplier inner, MemtableBudget budget) {
      this.inner = inner;
      this.budget = budget;
    }

    @Override
    public String name() {
      return inner.name();
    }

    @Override
    public WindowStore<Bytes, byte[]> get() {
      return new BudgetedWindowStore(inner.get(), budget);
    }

    @Override
    public String metricsScope() {
      return inner.metricsScope();
    }

    @Override
    public long segmentIntervalMs() {
      return inner.segmentIntervalMs();
    }

    @Override
    public long windowSize() {
      return inner.windowSize();
    }

    @Override
    public boolean retainDuplicates() {
      return inner.retainDuplicates();
    }

    @Override
    public long retentionPeriod() {
      return inner.retentionPeriod();
    }
  }

  static final class BudgetedKeyValueStore extends Budgeted implements KeyValueStore<Bytes, byte[]> {
    private final KeyValueStore<Bytes, byte[]> store;

    BudgetedKeyValueStore(KeyValueStore<Bytes, byte[]> store, MemtableBudget budget) {
      super(store, budget);
      this.store = store;
    }

    @Override
    public void put(Bytes key, byte[] value) {
      store.put(key, value);
      wrote(key, value);
    }

    @Override
    public byte[] putIfAbsent(Bytes key, byte[] value) {
      byte[] previous = store.putIfAbsent(key, value);
      if (previous == null) {
        wrote(key, value);
      }
      return previous;
    }

    @Override
    public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
      store.putAll(entries);
      for (KeyValue<Bytes, byte[]> e : entries) {
        wrote(e.key, e.value);
      }
    }

    @Override
    public byte[] delete(Bytes key) {
      byte[] previous = store.delete(key);
      wrote(key, null);
      return previous;
    }

    @Override
    public byte[] get(Bytes key) {
      return read(store.get(key));
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
      return read(store.range(from, to));
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
      return read(store.reverseRange(from, to));
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
      return read(store.all());
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
      return read(store.reverseAll());
    }

    @Override
    public <S extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, S prefixKeySerializer) {
      return read(store.prefixScan(prefix, prefixKeySerializer));
    }

    @Override
    public long approximateNumEntries() {
      return store.approximateNumEntries();
    }
  }

  static final class BudgetedWindowStore extends Budgeted implements WindowStore<Bytes, byte[]> {
    /** The window start a segmented store adds to each key, and its sequence number. */
    private static final int WINDOW_KEY_BYTES = 12;
    private final WindowStore<Bytes, byte[]> store;

    BudgetedWindowStore(WindowStore<Bytes, byte[]> store, MemtableBudget budget) {
      super(store, budget);
      this.store = store;
    }

    @Override
    public void put(Bytes key, byte[] value, long windowStartTimestamp) {
      store.put(key, value, windowStartTimestamp);
      tracked.wrote(key.get().length + WINDOW_KEY_BYTES, value == null ? 0 : value.length);
    }

    @Override
    public byte[] fetch(Bytes key, long time) {
      return read(store.fetch(key, time));
    }

    @Override
    public WindowStoreIterator<byte[]> fetch(Bytes key, long timeFrom, long timeTo) {
      return read(store.fetch(key, timeFrom, timeTo));
    }

    @Override
    public WindowStoreIterator<byte[]> fetch(Bytes key, Instant timeFrom, Instant timeTo) {
      return read(store.fetch(key, timeFrom, timeTo));
    }

    @Override
    public WindowStoreIterator<byte[]> backwardFetch(Bytes key, long timeFrom, long timeTo) {
      return read(store.backwardFetch(key, timeFrom, timeTo));
    }

    @Override
    public WindowStoreIterator<byte[]> backwardFetch(Bytes key, Instant timeFrom, Instant timeTo) {
      return read(store.backwardFetch(key, timeFrom, timeTo));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes keyFrom, Bytes keyTo, long timeFrom, long timeTo) {
      return read(store.fetch(keyFrom, keyTo, timeFrom, timeTo));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes keyFrom, Bytes keyTo, Instant timeFrom,
        Instant timeTo) {
      return read(store.fetch(keyFrom, keyTo, timeFrom, timeTo));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(Bytes keyFrom, Bytes keyTo, long timeFrom,
        long timeTo) {
      return read(store.backwardFetch(keyFrom, keyTo, timeFrom, timeTo));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(Bytes keyFrom, Bytes keyTo, Instant timeFrom,
        Instant timeTo) {
      return read(store.backwardFetch(keyFrom, keyTo, timeFrom, timeTo));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(long timeFrom, long timeTo) {
      return read(store.fetchAll(timeFrom, timeTo));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(Instant timeFrom, Instant timeTo) {
      return read(store.fetchAll(timeFrom, timeTo));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetchAll(long timeFrom, long timeTo) {
      return read(store.backwardFetchAll(timeFrom, timeTo));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetchAll(Instant timeFrom, Instant timeTo) {
      return read(store.backwardFetchAll(timeFrom, timeTo));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> all() {
      return read(store.all());
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardAll() {
      return read(store.backwardAll());
    }
  }
}
