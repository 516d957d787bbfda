package dev.impipe.inbox.query;

import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/** A read-only key-value store over a sorted map (bytes order, as RocksDB's) that can be closed under its readers. */
final class MapStore<V> implements ReadOnlyKeyValueStore<Bytes, V> {

  final NavigableMap<Bytes, V> map = new TreeMap<>();
  boolean closed;

  MapStore<V> put(Bytes key, V value) {
    map.put(key, value);
    return this;
  }

  @Override
  public V get(Bytes key) {
    open();
    return map.get(key);
  }

  @Override
  public KeyValueIterator<Bytes, V> range(Bytes from, Bytes to) {
    open();
    return iterator(map.subMap(from, true, to, true));
  }

  @Override
  public KeyValueIterator<Bytes, V> reverseRange(Bytes from, Bytes to) {
    open();
    return iterator(map.subMap(from, true, to, true).descendingMap());
  }

  @Override
  public KeyValueIterator<Bytes, V> all() {
    open();
    return iterator(map);
  }

  @Override
  public long approximateNumEntries() {
    return map.size();
  }

  private void open() {
    if (closed) {
      throw new InvalidStateStoreException("the store is closed");
    }
  }

  /** An iterator that fails like a RocksDB one once its store is closed. */
  private KeyValueIterator<Bytes, V> iterator(Map<Bytes, V> entries) {
    Iterator<Map.Entry<Bytes, V>> it = entries.entrySet().iterator();
    return new KeyValueIterator<>() {
      @Override
      public boolean hasNext() {
        open();
        return it.hasNext();
      }

      @Override
      public KeyValue<Bytes, V> next() {
        open();
        Map.Entry<Bytes, V> e = it.next();
        return KeyValue.pair(e.getKey(), e.getValue());
      }

      @Override
      public Bytes peekNextKey() {
        throw new UnsupportedOperationException();
      }

      @Override
      public void close() {
      }
    };
  }
}
