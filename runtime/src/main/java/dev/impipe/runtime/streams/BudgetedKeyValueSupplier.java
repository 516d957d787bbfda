package dev.impipe.runtime.streams;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;

/** Supplies a {@link MemtableBudget}-counted key-value store around the given supplier's. */
final class BudgetedKeyValueSupplier implements KeyValueBytesStoreSupplier {
  private final KeyValueBytesStoreSupplier inner;
  private final MemtableBudget budget;

  BudgetedKeyValueSupplier(KeyValueBytesStoreSupplier inner, MemtableBudget budget) {
    this.inner = inner;
    this.budget = budget;
  }

  @Override
  public String name() {
    return inner.name();
  }

  @Override
  public KeyValueStore<Bytes, byte[]> get() {
    return new BudgetedKeyValueStore(inner.get(), budget);
  }

  @Override
  public String metricsScope() {
    return inner.metricsScope();
  }
}
