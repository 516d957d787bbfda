package dev.impipe.runtime.streams;

import java.util.List;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/** A key-value store whose writes count against the {@link MemtableBudget}. */
final class BudgetedKeyValueStore extends Budgeted implements KeyValueStore<Bytes, byte[]> {
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
