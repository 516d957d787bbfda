package dev.impipe.inbox.internal;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
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

/**
 * An in-memory bytes store (a sorted map, lazy ranges) that counts its writes: below the changelogging layer, so
 * each write counted is one changelog record of the transaction that made it (tests). Unlike Kafka's in-memory store,
 * a range does not copy the keys it covers, so a sweep over a million entries stays fast.
 */
final class CountingStore implements KeyValueStore<Bytes, byte[]> {

  /**
   * More range reads than any test makes (a million-entry sweep makes about a thousand): a sweep that stops
   * advancing (re-reading the same empty range forever) fails at once instead of running until a test timeout.
   */
  private static final int MAX_RANGES = 100_000;

  private final String name;
  private int ranges;
  private final java.util.TreeMap<Bytes, byte[]> map = new java.util.TreeMap<>();
  private final AtomicLong writes;
  private boolean open;

  private CountingStore(String name, AtomicLong writes) {
    this.name = name;
    this.writes = writes;
  }

  /** A supplier of stores named {@code name} whose writes add to {@code writes}. */
  static KeyValueBytesStoreSupplier supplier(String name, AtomicLong writes) {
    return new KeyValueBytesStoreSupplier() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public KeyValueStore<Bytes, byte[]> get() {
        return new CountingStore(name, writes);
      }

      @Override
      public String metricsScope() {
        return "counting";
      }
    };
  }

  @Override
  public void put(Bytes key, byte[] value) {
    writes.incrementAndGet();
    if (value == null) {
      map.remove(key);
    } else {
      map.put(key, value);
    }
  }

  @Override
  public byte[] putIfAbsent(Bytes key, byte[] value) {
    byte[] old = map.get(key);
    if (old == null) {
      put(key, value);
    }
    return old;
  }

  @Override
  public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
    entries.forEach(e -> put(e.key, e.value));
  }

  @Override
  public byte[] delete(Bytes key) {
    writes.incrementAndGet();
    return map.remove(key);
  }

  @Override
  public byte[] get(Bytes key) {
    return map.get(key);
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
    countRange();
    return iterator(from == null && to == null ? map : from == null ? map.headMap(to, true)
        : to == null ? map.tailMap(from, true) : map.subMap(from, true, to, true), false);
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
    countRange();
    return iterator(from == null && to == null ? map : from == null ? map.headMap(to, true)
        : to == null ? map.tailMap(from, true) : map.subMap(from, true, to, true), true);
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> all() {
    return iterator(map, false);
  }

  @Override
  public KeyValueIterator<Bytes, byte[]> reverseAll() {
    return iterator(map, true);
  }

  private void countRange() {
    if (++ranges > MAX_RANGES) {
      throw new IllegalStateException("more than " + MAX_RANGES + " range reads of " + name + ": a loop that does"
          + " not advance");
    }
  }

  private static KeyValueIterator<Bytes, byte[]> iterator(java.util.NavigableMap<Bytes, byte[]> view,
      boolean reverse) {
    java.util.Iterator<java.util.Map.Entry<Bytes, byte[]>> it =
        (reverse ? view.descendingMap() : view).entrySet().iterator();
    return new KeyValueIterator<>() {
      private java.util.Map.Entry<Bytes, byte[]> peeked;

      @Override
      public boolean hasNext() {
        return peeked != null || it.hasNext();
      }

      @Override
      public KeyValue<Bytes, byte[]> next() {
        java.util.Map.Entry<Bytes, byte[]> e = peeked != null ? peeked : it.next();
        peeked = null;
        return KeyValue.pair(e.getKey(), e.getValue());
      }

      @Override
      public Bytes peekNextKey() {
        if (peeked == null) {
          peeked = it.next();
        }
        return peeked.getKey();
      }

      @Override
      public void close() {
        // nothing held
      }
    };
  }

  @Override
  public long approximateNumEntries() {
    return map.size();
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public void init(StateStoreContext context, StateStore root) {
    context.register(root, (key, value) -> put(Bytes.wrap(key), value));
    open = true;
  }

  @Override
  public void close() {
    open = false;
  }

  @Override
  public boolean persistent() {
    return false;
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
    return QueryResult.forUnknownQueryType(query, this);
  }

  @Override
  public Position getPosition() {
    return Position.emptyPosition();
  }
}
