package dev.impipe.runtime.streams;

import java.time.Instant;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/** A window store whose writes count against the {@link MemtableBudget}. */
final class BudgetedWindowStore extends Budgeted implements WindowStore<Bytes, byte[]> {
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
