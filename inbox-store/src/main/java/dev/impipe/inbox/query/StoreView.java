package dev.impipe.inbox.query;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.function.ToLongFunction;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The reads the sync and history queries need from one store partition: the live implementation goes through
 * Kafka Streams' interactive queries, tests read the store of a {@code TopologyTestDriver}.
 */
public interface StoreView<V> {

  /** At most {@code max} entries with keys in {@code [from, to]} (both inclusive), in key order or reversed. */
  List<KeyValue<Bytes, V>> range(Bytes from, Bytes to, boolean descending, int max);

  Optional<V> get(Bytes key);

  /**
   * Like {@link #range(Bytes, Bytes, boolean, int)}, but stops early once the entries read weigh more than
   * {@code maxBytes} by {@code size} and at least two are read: enough to cut a page within the budget and know that
   * more lie beyond it (see {@link PageBytes}), without reading a whole {@code max} of fat entries.
   */
  default List<KeyValue<Bytes, V>> range(Bytes from, Bytes to, boolean descending, int max, ToLongFunction<V> size,
      long maxBytes) {
    return take(range(from, to, descending, max).iterator(), max, size, maxBytes);
  }

  /** At most {@code max} entries of {@code it}, stopping as {@link #range(Bytes, Bytes, boolean, int,
   * ToLongFunction, long)} says. */
  static <V> List<KeyValue<Bytes, V>> take(Iterator<KeyValue<Bytes, V>> it, int max, ToLongFunction<V> size,
      long maxBytes) {
    List<KeyValue<Bytes, V>> out = new ArrayList<>();
    long bytes = 0;
    while (it.hasNext() && out.size() < max && (bytes <= maxBytes || out.size() < 2)) {
      KeyValue<Bytes, V> kv = it.next();
      out.add(kv);
      bytes += size.applyAsLong(kv.value);
    }
    return out;
  }

  /** A view of a store the caller may read directly. */
  static <V> StoreView<V> of(ReadOnlyKeyValueStore<Bytes, V> store) {
    return new StoreView<>() {
      @Override
      public List<KeyValue<Bytes, V>> range(Bytes from, Bytes to, boolean descending, int max) {
        List<KeyValue<Bytes, V>> out = new ArrayList<>();
        try (KeyValueIterator<Bytes, V> it = descending ? store.reverseRange(from, to) : store.range(from, to)) {
          while (it.hasNext() && out.size() < max) {
            out.add(it.next());
          }
        }
        return out;
      }

      @Override
      public List<KeyValue<Bytes, V>> range(Bytes from, Bytes to, boolean descending, int max,
          ToLongFunction<V> size, long maxBytes) {
        try (KeyValueIterator<Bytes, V> it = descending ? store.reverseRange(from, to) : store.range(from, to)) {
          return take(it, max, size, maxBytes);
        }
      }

      @Override
      public Optional<V> get(Bytes key) {
        return Optional.ofNullable(store.get(key));
      }
    };
  }
}
