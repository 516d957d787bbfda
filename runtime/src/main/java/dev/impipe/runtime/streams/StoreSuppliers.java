package dev.impipe.runtime.streams;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import java.time.Duration;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * The byte stores of every topology: RocksDB, or the Kafka Streams in-memory stores when the JVM runs with
 * {@code -Dim.state-stores=in-memory}. Only mutation analysis does that (the parent POM's PIT minions, ADR 0016): it
 * judges whether the unit tests notice a changed line of the processing logic, which in-memory stores answer alike
 * (same bytewise key order, same fetch semantics) three times faster. Unit tests in {@code verify}, integration
 * tests and every deployment use RocksDB.
 */
public final class StoreSuppliers {

  /** The system property choosing the store kind: {@code in-memory}, anything else (or unset) is RocksDB. */
  public static final String PROPERTY = "im.state-stores";

  private static final Set<String> MISS_READ = ConcurrentHashMap.newKeySet();

  private StoreSuppliers() {}

  /** A key-value store named {@code name}. */
  public static KeyValueBytesStoreSupplier keyValue(String name) {
    return inMemory() ? Stores.inMemoryKeyValueStore(name) : Stores.persistentKeyValueStore(name);
  }

  /** A key-value store named {@code name} whose RocksDB memtables count against the {@link MemtableBudget}. */
  public static KeyValueBytesStoreSupplier budgetedKeyValue(String name) {
    return inMemory()
        ? Stores.inMemoryKeyValueStore(name)
        : MemtableBudget.keyValue(Stores.persistentKeyValueStore(name));
  }

  /**
   * A window store named {@code name}, see {@link Stores#persistentWindowStore(String, Duration, Duration, boolean)};
   * on RocksDB it keeps its committed offsets while it has no segment ({@link KeptOffsetsWindowStore}).
   */
  public static WindowBytesStoreSupplier window(String name, Duration retention, Duration windowSize,
      boolean retainDuplicates) {
    return inMemory()
        ? Stores.inMemoryWindowStore(name, retention, windowSize, retainDuplicates)
        : KeptOffsetsWindowStore.supplier(Stores.persistentWindowStore(name, retention, windowSize, retainDuplicates));
  }

  /**
   * A key-value store named {@code name} that is read mostly for keys it does not hold yet (a new user x
   * conversation): its RocksDB memtables get a whole-key Bloom filter, so such a read skips the memtable's skip list
   * (SST files have Kafka Streams' Bloom filter already). See {@link #missesOften}.
   */
  public static KeyValueBytesStoreSupplier missReadKeyValue(String name) {
    MISS_READ.add(name);
    return keyValue(name);
  }

  /** Whether the store named {@code storeName} was made with {@link #missReadKeyValue} (for the RocksDB config). */
  public static boolean missesOften(String storeName) {
    return MISS_READ.contains(storeName);
  }

  static boolean inMemory() {
    return "in-memory".equals(System.getProperty(PROPERTY));
  }
}
