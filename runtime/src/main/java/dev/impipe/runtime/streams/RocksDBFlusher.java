package dev.impipe.runtime.streams;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.processor.StateStore;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * Flushes the memtables of a Kafka Streams RocksDB store (a key-value store, or every segment of a segmented window
 * store) to disk. Kafka Streams 4 has no public way to do it: a store's {@code commit} only records changelog offsets,
 * and under exactly-once nothing flushes a running store; RocksDB flushes a memtable by itself only once it is full.
 * So this reaches the store's {@link RocksDB} handle through Kafka Streams' internal classes ({@code RocksDBStore.db},
 * {@code AbstractRocksDBSegmentedBytesStore.getSegments()}), checked once at class load: when they are not there (a
 * Kafka Streams upgrade moved them) {@link #available()} is false and nothing is flushed ({@code MemtableBudgetTest}
 * fails on such an upgrade, so it does not go unnoticed).
 *
 * <p>A flush is what RocksDB does by itself whenever a memtable fills: the data moves from memory to an SST file;
 * nothing the store holds changes, and neither do the offsets Kafka Streams keeps in it. Each flush holds the store's
 * own monitor (the one its put, get and close hold), so it never meets a closed handle.
 */
final class RocksDBFlusher {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RocksDBFlusher.class);
  private static final String INTERNALS = "org.apache.kafka.streams.state.internals.";

  private static final Class<?> ROCKSDB_STORE;
  private static final Field DB;
  private static final Class<?> WRAPPED_STORE;
  private static final Method WRAPPED;
  private static final Class<?> SEGMENTED_STORE;
  private static final Method SEGMENTS;

  static {
    Class<?> rocksDbStore = null;
    Field db = null;
    Class<?> wrappedStore = null;
    Method wrapped = null;
    Class<?> segmentedStore = null;
    Method segments = null;
    try {
      rocksDbStore = Class.forName(INTERNALS + "RocksDBStore");
      db = rocksDbStore.getDeclaredField("db");
      db.setAccessible(true);
      wrappedStore = Class.forName(INTERNALS + "WrappedStateStore");
      wrapped = wrappedStore.getMethod("wrapped");
      segmentedStore = Class.forName(INTERNALS + "AbstractRocksDBSegmentedBytesStore");
      segments = segmentedStore.getDeclaredMethod("getSegments");
      segments.setAccessible(true);
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn("Kafka Streams' RocksDB store internals are not as expected ({}): the memtable budget will not flush "
          + "stores, IM_ROCKSDB_MEMORY bounds the block cache only", e.toString());
      rocksDbStore = null;
    }
    ROCKSDB_STORE = rocksDbStore;
    DB = db;
    WRAPPED_STORE = wrappedStore;
    WRAPPED = wrapped;
    SEGMENTED_STORE = segmentedStore;
    SEGMENTS = segments;
  }

  private RocksDBFlusher() {}

  /** Whether stores can be flushed with this Kafka Streams. */
  static boolean available() {
    return ROCKSDB_STORE != null;
  }

  /**
   * The RocksDB stores inside {@code store} (itself, or a window store's segments as they are now); empty when it
   * holds none this class knows.
   */
  static List<StateStore> rocksDbStores(StateStore store) {
    List<StateStore> found = new ArrayList<>();
    if (!available()) {
      return found;
    }
    try {
      StateStore s = store;
      while (!ROCKSDB_STORE.isInstance(s)) {
        if (s instanceof Budgeted budgeted) {
          s = budgeted.inner();
        } else if (WRAPPED_STORE.isInstance(s)) {
          s = (StateStore) WRAPPED.invoke(s);
        } else {
          break;
        }
      }
      if (ROCKSDB_STORE.isInstance(s)) {
        found.add(s);
      } else if (SEGMENTED_STORE.isInstance(s)) {
        for (Object segment : (List<?>) SEGMENTS.invoke(s)) {
          if (ROCKSDB_STORE.isInstance(segment)) {
            found.add((StateStore) segment);
          }
        }
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot reach the RocksDB stores of " + store.name(), e);
    }
    return found;
  }

  /** Flushes every RocksDB store inside {@code store}; false when it holds none this class knows. */
  static boolean flush(StateStore store) {
    List<StateStore> stores = rocksDbStores(store);
    for (StateStore s : stores) {
      flushOne(s);
    }
    return !stores.isEmpty();
  }

  /** Bytes in the memtables of the RocksDB stores inside {@code store} (RocksDB's own figure; tests and metrics). */
  static long memtableBytes(StateStore store) {
    long total = 0;
    for (StateStore s : rocksDbStores(store)) {
      synchronized (s) {
        RocksDB db = handle(s);
        if (db != null && s.isOpen()) {
          try {
            total += db.getLongProperty("rocksdb.cur-size-all-mem-tables");
          } catch (RocksDBException e) {
            throw new ProcessorStateException("reading the memtable size of " + s.name(), e);
          }
        }
      }
    }
    return total;
  }

  private static void flushOne(StateStore s) {
    // The store's own monitor: RocksDBStore's put, get and close are synchronized on it.
    synchronized (s) {
      RocksDB db = handle(s);
      if (db == null || !s.isOpen()) {
        return;
      }
      try (FlushOptions options = new FlushOptions().setWaitForFlush(false)) {
        db.flush(options);
      } catch (RocksDBException e) {
        throw new ProcessorStateException("flushing the memtables of " + s.name(), e);
      }
    }
  }

  private static RocksDB handle(StateStore s) {
    try {
      return (RocksDB) DB.get(s);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot reach the RocksDB handle of " + s.name(), e);
    }
  }
}
