package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StoreSuppliersTest {

  private String saved;

  @BeforeEach
  void save() {
    // PIT's minions run with the property set: each test says what it wants.
    saved = System.getProperty(StoreSuppliers.PROPERTY);
  }

  @AfterEach
  void restore() {
    if (saved == null) {
      System.clearProperty(StoreSuppliers.PROPERTY);
    } else {
      System.setProperty(StoreSuppliers.PROPERTY, saved);
    }
  }

  @Test
  void storesAreRocksDbUnlessTheJvmAsksForMemory() {
    // Given no choice made, or another word than in-memory
    for (String choice : new String[] {null, "rocksdb"}) {
      if (choice == null) {
        System.clearProperty(StoreSuppliers.PROPERTY);
      } else {
        System.setProperty(StoreSuppliers.PROPERTY, choice);
      }
      // Then every supplier gives a persistent store with the name and window asked for, budgeted where asked
      KeyValueBytesStoreSupplier kv = StoreSuppliers.keyValue("kv");
      assertThat(kv.name()).isEqualTo("kv");
      assertThat(kv.get().persistent()).isTrue();
      WindowBytesStoreSupplier w = StoreSuppliers.window("w", Duration.ofHours(1), Duration.ofMinutes(1), true);
      assertThat(w.name()).isEqualTo("w");
      assertThat(w.retentionPeriod()).isEqualTo(3_600_000L);
      assertThat(w.windowSize()).isEqualTo(60_000L);
      assertThat(w.retainDuplicates()).isTrue();
      assertThat(w.get().persistent()).isTrue();
      KeyValueBytesStoreSupplier budgeted = StoreSuppliers.budgetedKeyValue("b");
      assertThat(budgeted).isInstanceOf(BudgetedKeyValueSupplier.class);
      assertThat(budgeted.name()).isEqualTo("b");
      assertThat(budgeted.get().persistent()).isTrue();
    }
  }

  @Test
  void storesAreInMemoryWhenTheJvmAsks() {
    System.setProperty(StoreSuppliers.PROPERTY, "in-memory");
    KeyValueBytesStoreSupplier kv = StoreSuppliers.keyValue("kv");
    assertThat(kv.name()).isEqualTo("kv");
    assertThat(kv.get().persistent()).isFalse();
    WindowBytesStoreSupplier w = StoreSuppliers.window("w", Duration.ofHours(1), Duration.ofMinutes(1), false);
    assertThat(w.name()).isEqualTo("w");
    assertThat(w.retentionPeriod()).isEqualTo(3_600_000L);
    assertThat(w.windowSize()).isEqualTo(60_000L);
    assertThat(w.retainDuplicates()).isFalse();
    assertThat(w.get().persistent()).isFalse();
    // the memtable budget is about RocksDB: an in-memory store is not wrapped
    KeyValueBytesStoreSupplier budgeted = StoreSuppliers.budgetedKeyValue("b");
    assertThat(budgeted).isNotInstanceOf(BudgetedKeyValueSupplier.class);
    assertThat(budgeted.get().persistent()).isFalse();
  }
}
