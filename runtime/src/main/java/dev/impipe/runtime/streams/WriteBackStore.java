package dev.impipe.runtime.streams;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * A write-back layer on top of a (logged) key-value store: its processor reads and writes decoded values
 * ({@link #value}, {@link #write}), and the values changed since the last write-back are written to the store below
 * at a commit the processor asked for ({@link #arm}): Kafka Streams flushes every store's cache ({@link #flushCache})
 * before it commits the transaction, and an armed store writes its changes below there, then runs its
 * {@link #onWriteBack} hook in the same transaction. A value changed many times between two write-backs costs one
 * store write and one changelog record.
 *
 * <p>A changed value is held encoded, as the bytes it is stored as, in large primitive arrays ({@link HeldValues}):
 * each {@link #write} encodes and each {@link #value} of a held key decodes, but nothing a change makes stays in the
 * heap until the write-back (up to an interval: long enough for many young collections to copy it, ADR 0020), and a
 * change, a new key or a key let go stores no reference into a long-lived object (whose card each young collection
 * would scan): the bytes and where they are go into arrays of bytes and ints.
 *
 * <p>Armed at every commit, it is exactly-once like the store below. Armed less often, the store below lags the
 * committed input; the processor must then be able to apply that input again after a crash (the hook writes how far
 * the store below goes, see the conversation list's checkpoints). A task closed without a commit drops the changes.
 *
 * <p>Queries (interactive queries on other threads, through the {@code KeyValueStore} methods) see the changed values
 * as soon as they are written, merged over the store below in key order (a range read copies the held values of its
 * range when it begins). A value written below stays in memory until the next commit, so that a range read that
 * began before the write below (and takes less than a commit interval) still finds it in one of the two; then it is
 * let go unless it changed again.
 *
 * @param <V> the decoded value
 */
public final class WriteBackStore<V> extends WrappedStateStore<KeyValueStore<Bytes, byte[]>, Bytes, byte[]>
    implements
      KeyValueStore<Bytes, byte[]> {

  /** How values are stored below. */
  public record Codec<V>(Function<V, byte[]> encoder, Function<byte[], V> decoder) {}

  /** How many buckets the keys fall into (a write-back writes some or all). */
  public static final int BUCKETS = HeldValues.BUCKETS;
  /** Every bucket (see {@link #onWriteBack}). */
  public static final long ALL = (1L << BUCKETS) - 1;
  /** Apps closing cleanly: their write-back stores write every change at each commit, the last one included. */
  private static final Set<String> CLOSING = ConcurrentHashMap.newKeySet();

  private final Codec<V> codec;
  /** Held: what changed since the last write-back, and what it wrote (until the next commit). */
  private final HeldValues held;
  private boolean everyCommit = true;
  /** Buckets to write at the next commit, a bit each. */
  private long armed;
  private LongConsumer onWriteBack = buckets -> {};
  private String applicationId;
  /** The bottom store below (RocksDB): {@link #value} reads it directly, the layers between only pass a read on. */
  private KeyValueStore<Bytes, byte[]> bottom;
  /** A byte-level write went through the record cache since its flush: it may hold newer than the bottom store. */
  private boolean writtenBelow;

  /** Over {@code below}, its keys of any layout. */
  public WriteBackStore(KeyValueStore<Bytes, byte[]> below, Codec<V> codec) {
    this(below, codec, false);
  }

  /**
   * Over {@code below}, whose keys start with a string field ({@link OrderedKey}) when {@code byFirstString}: the
   * changes of one first value (e.g. a user's) are kept apart in key order, so that a new key costs an insertion
   * among its first value's keys only, and a range read within one first value reads only those.
   */
  public WriteBackStore(KeyValueStore<Bytes, byte[]> below, Codec<V> codec, boolean byFirstString) {
    super(below);
    this.codec = codec;
    this.held = new HeldValues(byFirstString ? OrderedKey::firstStringLength : null);
  }

  /**
   * The write-back store under a store handed out by a processor context (which wraps it in a decorator).
   *
   * @throws IllegalArgumentException when {@code store} has no write-back layer
   */
  @SuppressWarnings("unchecked")
  public static <V> WriteBackStore<V> of(StateStore store) {
    StateStore s = store;
    while (!(s instanceof WriteBackStore) && s instanceof WrappedStateStore<?, ?, ?> w) {
      s = w.wrapped();
    }
    if (s instanceof WriteBackStore<?> found) {
      return (WriteBackStore<V>) found;
    }
    throw new IllegalArgumentException("store " + store.name() + " has no write-back layer");
  }

  /**
   * Called before {@code applicationId} is closed cleanly: from then on its write-back stores write their changes at
   * every commit, so the last commit of each task leaves the stores (and their changelogs) complete. Until
   * {@link #closed}.
   */
  public static void closing(String applicationId) {
    CLOSING.add(applicationId);
  }

  /** After {@code applicationId} was closed (see {@link #closing}). */
  public static void closed(String applicationId) {
    CLOSING.remove(applicationId);
  }

  @Override
  @SuppressWarnings("unchecked")
  public void init(StateStoreContext context, StateStore root) {
    applicationId = context.applicationId();
    super.init(context, root);
    StateStore s = wrapped();
    while (s instanceof WrappedStateStore<?, ?, ?> w) {
      s = w.wrapped();
    }
    bottom = s instanceof KeyValueStore<?, ?> kv ? (KeyValueStore<Bytes, byte[]>) kv : wrapped();
  }

  /** The current value of {@code key}, or null. Stream thread. */
  public V value(Bytes key) {
    byte[] stored = held.get(key);
    if (stored == HeldValues.NOT_HELD) {
      stored = (writtenBelow || bottom == null ? wrapped() : bottom).get(key);
    }
    return stored == null ? null : codec.decoder().apply(stored);
  }

  /** Sets {@code key} to {@code value} (null: deletes it), written below at the next write-back. Stream thread. */
  public void write(Bytes key, V value) {
    held.write(key, value == null ? null : codec.encoder().apply(value));
  }

  /** How many changed values wait for a write-back. Stream thread. */
  public int pending() {
    return held.pending();
  }

  /**
   * How many values are held in memory: those waiting for a write-back and those written below at the last one.
   * Stream thread.
   */
  public int held() {
    return held.size();
  }

  /**
   * Sets when the changes are written below: {@code everyCommit} true (the default), at every commit; false, only
   * at a commit after {@link #arm()} or {@link #arm(int)}.
   */
  public void writeBackEveryCommit(boolean everyCommit) {
    this.everyCommit = everyCommit;
  }

  /** Writes every change below at the next commit. Stream thread. */
  public void arm() {
    armed = ALL;
  }

  /**
   * Writes the changes of the keys in {@code bucket} (0 to {@link #BUCKETS} - 1) below at the next commit; the
   * bucket of a key is {@link #groupBucket} its group (a store whose keys start with a string, see the constructor;
   * all keys of a store without are in bucket 0). Stream thread.
   */
  public void arm(int bucket) {
    armed |= 1L << bucket;
  }

  /**
   * Run after each write-back, in its transaction, with the buckets written (bit {@code b} set: bucket {@code b};
   * {@link #ALL}: every key). A processor writes its checkpoints there. Stream thread.
   */
  public void onWriteBack(LongConsumer hook) {
    onWriteBack = hook;
  }

  /** The bucket of the keys starting with {@code group} (a store's first string field, see {@link OrderedKey}). */
  public static int groupBucket(Bytes group) {
    return HeldValues.groupBucket(group);
  }

  /**
   * Kafka Streams flushes every store's cache before each commit of its transaction (its {@code commit} comes after
   * the transaction: nothing is written there).
   */
  @Override
  public void flushCache() {
    held.letGoWritten(); // written at the last write-back, a commit ago
    long buckets = everyCommit || (applicationId != null && CLOSING.contains(applicationId)) ? ALL : armed;
    if (buckets != 0) {
      writeBack(buckets);
      onWriteBack.accept(buckets);
      armed = 0;
    }
    super.flushCache();
    writtenBelow = false;
  }

  @Override
  public void close() {
    // Closed without a commit: what was not written below is dropped with the input that made it.
    held.clear();
    super.close();
  }

  /**
   * Writes the changed values of the keys in {@code buckets} below. The values written now are held until the next
   * commit ({@link HeldValues#letGoWritten}), so that a range read that began before this write finds them in one of
   * the two.
   */
  private void writeBack(long buckets) {
    KeyValueStore<Bytes, byte[]> below = wrapped();
    held.writeBack(buckets, (key, value) -> {
      if (value == null) {
        below.delete(key);
      } else {
        below.put(key, value);
      }
    });
  }

  // The byte-level store, for queries and for writers that bypass the write-back layer.

  @Override
  public byte[] get(Bytes key) {
    byte[] stored = held.get(key);
    return stored == HeldValues.NOT_HELD ? wrapped().get(key) : stored;
  }

  @Override
  public void put(Bytes key, byte[] value) {
    held.remove(key);
    writtenBelow = true;
    wrapped().put(key, value);
  }

  @Override
  public byte[] putIfAbsent(Bytes key, byte[] value) {
    byte[] current = get(key);
    if (current == null) {
      put(key, value);
    }
    return current;
  }

  @Override
  public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
    for (KeyValue<Bytes, byte[]> e : entries) {
      put(e.key, e.value);
    }
  }

  @Override
  public byte[] delete(Bytes key) {
    byte[] previous = get(key);
    held.remove(key);
    writtenBelow = true;
    wrapped().delete(key);
    return previous;
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
    return merged(from, to, false);
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
    return merged(from, to, true);
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> all() {
    return merged(null, null, false);
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> reverseAll() {
    return merged(null, null, true);
  }

  @Override
  public <S extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, S prefixKeySerializer) {
    Bytes from = Bytes.wrap(prefixKeySerializer.serialize(null, prefix));
    // The store below's prefix scan, and the changes whose keys start with the prefix.
    Bytes end = OrderedKey.prefixEnd(from);
    List<KeyValue<Bytes, byte[]>> changes = held.range(from, end, false);
    return new WriteBackIterator(changes, wrapped().prefixScan(prefix, prefixKeySerializer), false);
  }

  @Override
  public long approximateNumEntries() {
    return wrapped().approximateNumEntries();
  }

  private KeyValueIterator<Bytes, byte[]> merged(Bytes from, Bytes to, boolean reverse) {
    if (from != null && to != null && from.compareTo(to) > 0) {
      return wrapped().range(from, to); // Kafka Streams' own answer to an inverted range
    }
    List<KeyValue<Bytes, byte[]>> changes = held.range(from, to, true);
    KeyValueIterator<Bytes, byte[]> below = reverse ? wrapped().reverseRange(from, to) : wrapped().range(from, to);
    return new WriteBackIterator(changes, below, reverse);
  }
}
