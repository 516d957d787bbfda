package dev.impipe.inbox.query;

import dev.impipe.inbox.internal.StoreKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * A {@link StoreView} over a sorted map (bytes order, as RocksDB's), for fast pure tests of the queries. It counts
 * its reads and fails once a query has made more than {@code maxReads} of them: a query that stops advancing (a
 * paging or search loop stuck on one key) fails at once instead of running until a timeout.
 */
final class MemoryStoreView<V> implements StoreView<V> {

  private final NavigableMap<Bytes, V> map = new TreeMap<>();
  private final int maxReads;
  private int reads;

  MemoryStoreView(int maxReads) {
    this.maxReads = maxReads;
  }

  MemoryStoreView() {
    this(10_000);
  }

  /** Stores {@code value} at {@code seq} of {@code owner}'s timeline. */
  MemoryStoreView<V> entry(String owner, long seq, V value) {
    map.put(StoreKeys.entry(owner, seq), value);
    return this;
  }

  MemoryStoreView<V> put(Bytes key, V value) {
    map.put(key, value);
    return this;
  }

  /** Reads made since the last call (range and get calls). */
  int takeReads() {
    int r = reads;
    reads = 0;
    return r;
  }

  @Override
  public List<KeyValue<Bytes, V>> range(Bytes from, Bytes to, boolean descending, int max) {
    read();
    List<KeyValue<Bytes, V>> out = new ArrayList<>();
    if (from.compareTo(to) > 0) {
      return out; // as RocksDB: an inverted range is empty
    }
    NavigableMap<Bytes, V> view = map.subMap(from, true, to, true);
    for (var e : (descending ? view.descendingMap() : view).entrySet()) {
      if (out.size() >= max) {
        break;
      }
      out.add(KeyValue.pair(e.getKey(), e.getValue()));
    }
    return out;
  }

  @Override
  public Optional<V> get(Bytes key) {
    read();
    return Optional.ofNullable(map.get(key));
  }

  private void read() {
    if (++reads > maxReads) {
      throw new AssertionError("more than " + maxReads + " store reads for one query: it does not advance");
    }
  }
}
