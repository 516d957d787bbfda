package dev.impipe.runtime.streams;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;

/** Supplies a {@link MemtableBudget}-counted window store around the given supplier's. */
final class BudgetedWindowSupplier extends WrappingWindowSupplier {
  private final MemtableBudget budget;

  BudgetedWindowSupplier(WindowBytesStoreSupplier inner, MemtableBudget budget) {
    super(inner);
    this.budget = budget;
  }

  @Override
  WindowStore<Bytes, byte[]> wrap(WindowStore<Bytes, byte[]> store) {
    return new BudgetedWindowStore(store, budget);
  }
}
