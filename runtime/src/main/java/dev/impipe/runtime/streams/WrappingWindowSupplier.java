package dev.impipe.runtime.streams;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;

/** Supplies a layer around another supplier's window store: the store's settings are the inner supplier's. */
abstract class WrappingWindowSupplier implements WindowBytesStoreSupplier {
  private final WindowBytesStoreSupplier inner;

  WrappingWindowSupplier(WindowBytesStoreSupplier inner) {
    this.inner = inner;
  }

  /** The layer around {@code store}, the inner supplier's new store. */
  abstract WindowStore<Bytes, byte[]> wrap(WindowStore<Bytes, byte[]> store);

  @Override
  public final WindowStore<Bytes, byte[]> get() {
    return wrap(inner.get());
  }

  @Override
  public String name() {
    return inner.name();
  }

  @Override
  public String metricsScope() {
    return inner.metricsScope();
  }

  @Override
  public long segmentIntervalMs() {
    return inner.segmentIntervalMs();
  }

  @Override
  public long windowSize() {
    return inner.windowSize();
  }

  @Override
  public boolean retainDuplicates() {
    return inner.retainDuplicates();
  }

  @Override
  public long retentionPeriod() {
    return inner.retentionPeriod();
  }
}
