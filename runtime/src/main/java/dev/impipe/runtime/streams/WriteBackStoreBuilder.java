package dev.impipe.runtime.streams;

import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;

/** Builds a {@link WriteBackStore} on top of what {@code below} builds (its caching and logging as configured). */
public final class WriteBackStoreBuilder<V> implements StoreBuilder<WriteBackStore<V>> {
  private final StoreBuilder<KeyValueStore<Bytes, byte[]>> below;
  private final WriteBackStore.Codec<V> codec;

  public WriteBackStoreBuilder(StoreBuilder<KeyValueStore<Bytes, byte[]>> below, WriteBackStore.Codec<V> codec) {
    this.below = below;
    this.codec = codec;
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
    return new WriteBackStore<>(below.build(), codec);
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
