package dev.impipe.runtime.streams;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;

/** Supplies a {@link MemtableBudget}-counted window store around the given supplier's. */
final class BudgetedWindowSupplier implements WindowBytesStoreSupplier {
  private final WindowBytesStoreSupplier inner;
  private final MemtableBudget budget;

  BudgetedWindowSupplier(WindowBytesStoreSupplier inner, MemtableBudget budget) {
    this.inner = inner;
    this.budget = budget;
  }

  @Override
  public String name() {
    return inner.name();
  }

  @Override
  public WindowStore<Bytes, byte[]> get() {
    return new BudgetedWindowStore(inner.get(), budget);
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
