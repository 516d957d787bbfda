package dev.impipe.runtime.streams;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Function;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * A write-back layer on top of a (cached, logged) key-value store: its processor reads and writes decoded values
 * ({@link #value}, {@link #write}), and the values changed since the last write-back are encoded and written to the
 * store below at a commit the processor asked for ({@link #arm}): Kafka Streams flushes every store's cache
 * ({@link #flushCache}) before it commits the transaction, and an armed store writes its changes below there, then
 * runs its {@link #onWriteBack} hook in the same transaction. A value changed many times between two write-backs
 * costs one encoding, one store write and one changelog record, and none of its reads decodes.
 *
 * <p>Armed at every commit, it is exactly-once like the store below. Armed less often, the store below lags the
 * committed input; the processor must then be able to apply that input again after a crash (the hook writes how far
 * the store below goes, see the conversation list's checkpoints). A task closed without a commit drops the changes.
 *
 * <p>Queries (interactive queries on other threads, through the {@code KeyValueStore} methods) see the changed values
 * as soon as they are written, merged over the store below in key order. A value written below stays in the change
 * map until the next commit, so that a range read that began before the write below (and takes less than a commit
 * interval) still finds it in one of the two.
 *
 * @param <V> the decoded value (immutable: it is read by query threads while the stream thread goes on)
 */
public final class WriteBackStore<V> extends WrappedStateStore<KeyValueStore<Bytes, byte[]>, Bytes, byte[]>
    implements
      KeyValueStore<Bytes, byte[]> {

  /** How values are stored below. */
  public record Codec<V>(Function<V, byte[]> encoder, Function<byte[], V> decoder) {
    byte[] encode(V value) {
      return encoder.apply(value);
    }

    V decode(byte[] stored) {
      return decoder.apply(stored);
    }
  }

  static final Object DELETED = new Object();
  /** Apps closing cleanly: their write-back stores write every change at each commit, the last one included. */
  private static final Set<String> CLOSING = ConcurrentHashMap.newKeySet();

  private final Codec<V> codec;
  /**
   * Changed values (or {@link #DELETED}) by key, in key order: written by the stream thread, read by queries. Keys
   * compare with {@link OrderedKey#compare} (the order of {@link Bytes#compareTo}, vectorised).
   */
  private final ConcurrentSkipListMap<Bytes, Object> changed = new ConcurrentSkipListMap<>(
      (a, b) -> OrderedKey.compare(a.get(), b.get()));
  /** The same entries for the stream thread's own lookups: a hash lookup, not a walk down the skip list. */
  private final Map<Bytes, Object> own = new HashMap<>();
  /** Keys written below at the last commit, removed from {@link #changed} at the next one. Stream thread only. */
  private Set<Bytes> writtenBelow = new HashSet<>();
  private boolean everyCommit = true;
  private boolean armed;
  private Runnable onWriteBack = () -> {};
  private String applicationId;

  public WriteBackStore(KeyValueStore<Bytes, byte[]> below, Codec<V> codec) {
    super(below);
    this.codec = codec;
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
  public void init(StateStoreContext context, StateStore root) {
    applicationId = context.applicationId();
    super.init(context, root);
  }

  /** The current value of {@code key}, or null. Stream thread. */
  @SuppressWarnings("unchecked")
  public V value(Bytes key) {
    Object c = own.get(key);
    if (c != null) {
      return c == DELETED ? null : (V) c;
    }
    byte[] stored = wrapped().get(key);
    return stored == null ? null : codec.decode(stored);
  }

  /** Sets {@code key} to {@code value} (null: deletes it), written below at the next commit. Stream thread. */
  public void write(Bytes key, V value) {
    Object v = value == null ? DELETED : value;
    own.put(key, v);
    changed.put(key, v);
    writtenBelow.remove(key);
  }

  /** How many changed values wait for a write-back or were written below at the last commit. Stream thread. */
  public int pending() {
    return own.size(); // the skip list's own size() counts its entries one by one
  }

  private void forget(Bytes key) {
    own.remove(key);
    changed.remove(key);
  }

  /**
   * Sets when the changes are written below: {@code everyCommit} true (the default), at every commit; false, only
   * at a commit after {@link #arm()}.
   */
  public void writeBackEveryCommit(boolean everyCommit) {
    this.everyCommit = everyCommit;
  }

  /** Writes the changes below at the next commit. Stream thread. */
  public void arm() {
    armed = true;
  }

  /** Run after each write-back, in its transaction (a processor writes its checkpoint there). Stream thread. */
  public void onWriteBack(Runnable hook) {
    onWriteBack = hook;
  }

  /**
   * Kafka Streams flushes every store's cache before each commit of its transaction (its {@code commit} comes after
   * the transaction: nothing is written there).
   */
  @Override
  public void flushCache() {
    // What the last commit wrote below has been there for a commit interval: readers find it there now.
    for (Bytes key : writtenBelow) {
      forget(key);
    }
    writtenBelow = new HashSet<>();
    writeBackIfArmed();
    super.flushCache();
  }

  private void writeBackIfArmed() {
    if (everyCommit || armed || (applicationId != null && CLOSING.contains(applicationId))) {
      writeBack();
      onWriteBack.run();
      armed = false;
    }
  }

  @Override
  public void close() {
    // Closed without a commit: what was not written below is dropped with the input that made it.
    changed.clear();
    own.clear();
    writtenBelow.clear();
    super.close();
  }

  @SuppressWarnings("unchecked")
  private void writeBack() {
    Set<Bytes> now = new HashSet<>();
    KeyValueStore<Bytes, byte[]> below = wrapped();
    for (Map.Entry<Bytes, Object> e : own.entrySet()) {
      if (e.getValue() == DELETED) {
        below.delete(e.getKey());
      } else {
        below.put(e.getKey(), codec.encode((V) e.getValue()));
      }
      now.add(e.getKey());
    }
    writtenBelow = now;
  }

  private byte[] bytes(Object c) {
    @SuppressWarnings("unchecked")
    V v = (V) c;
    return c == DELETED ? null : codec.encode(v);
  }

  // The byte-level store, for queries and for writers that bypass the write-back layer.

  @Override
  public byte[] get(Bytes key) {
    Object c = changed.get(key);
    return c != null ? bytes(c) : wrapped().get(key);
  }

  @Override
  public void put(Bytes key, byte[] value) {
    forget(key);
    writtenBelow.remove(key);
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
    forget(key);
    writtenBelow.remove(key);
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
    NavigableMap<Bytes, Object> changes = end == null ? changed.tailMap(from, true)
        : changed.subMap(from, true, end, false);
    return new WriteBackIterator(changes, wrapped().prefixScan(prefix, prefixKeySerializer), false, this::bytes);
  }

  @Override
  public long approximateNumEntries() {
    return wrapped().approximateNumEntries();
  }

  private KeyValueIterator<Bytes, byte[]> merged(Bytes from, Bytes to, boolean reverse) {
    if (from != null && to != null && from.compareTo(to) > 0) {
      return wrapped().range(from, to); // Kafka Streams' own answer to an inverted range
    }
    NavigableMap<Bytes, Object> changes = changed;
    if (from != null) {
      changes = changes.tailMap(from, true);
    }
    if (to != null) {
      changes = changes.headMap(to, true);
    }
    KeyValueIterator<Bytes, byte[]> below = reverse ? wrapped().reverseRange(from, to) : wrapped().range(from, to);
    return new WriteBackIterator(reverse ? changes.descendingMap() : changes, below, reverse, this::bytes);
  }
}
