package dev.impipe.runtime.streams;

import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;

/** Builds a {@link WriteBackStore} on top of what {@code below} builds (its caching and logging as configured). */
public final class WriteBackStoreBuilder<V> implements StoreBuilder<WriteBackStore<V>> {
  private final StoreBuilder<KeyValueStore<Bytes, byte[]>> below;
  private final WriteBackStore.Codec<V> codec;
  private final boolean byFirstString;

  public WriteBackStoreBuilder(StoreBuilder<KeyValueStore<Bytes, byte[]>> below, WriteBackStore.Codec<V> codec) {
    this(below, codec, false);
  }

  /**
   * @param byFirstString every key starts with a string field: see
   *     {@link WriteBackStore#WriteBackStore(KeyValueStore, WriteBackStore.Codec, boolean)}
   */
  public WriteBackStoreBuilder(StoreBuilder<KeyValueStore<Bytes, byte[]>> below, WriteBackStore.Codec<V> codec,
      boolean byFirstString) {
    this.below = below;
    this.codec = codec;
    this.byFirstString = byFirstString;
  }

  @Override
  public StoreBuilder<WriteBackStore<V>> withCachingEnabled() {
    below.withCachingEnabled();
    return this;
  }

  @Override
  public StoreBuilder<WriteBackStore<V>> withCachingDisabled() {
    below.withCachingDisabled();
    return this;
  }

  @Override
  public StoreBuilder<WriteBackStore<V>> withLoggingEnabled(Map<String, String> config) {
    below.withLoggingEnabled(config);
    return this;
  }

  @Override
  public StoreBuilder<WriteBackStore<V>> withLoggingDisabled() {
    below.withLoggingDisabled();
    return this;
  }

  @Override
  public WriteBackStore<V> build() {
    return new WriteBackStore<>(below.build(), codec, byFirstString);
  }

  @Override
  public Map<String, String> logConfig() {
    return below.logConfig();
  }

  @Override
  public boolean loggingEnabled() {
    return below.loggingEnabled();
  }

  @Override
  public String name() {
    return below.name();
  }
}
