package dev.impipe.inbox.query;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
      public Optional<V> get(Bytes key) {
        return Optional.ofNullable(store.get(key));
      }
    };
  }
}
