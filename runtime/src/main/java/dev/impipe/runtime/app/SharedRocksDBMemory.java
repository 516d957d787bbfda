package dev.impipe.runtime.app;

import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.config.Setting;
import dev.impipe.runtime.streams.StoreSuppliers;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;

/**
 * Bounds the RocksDB memory of the process by one setting, {@value #IM_ROCKSDB_MEMORY} (default {@value
 * #DEFAULT_MEMORY_TEXT}; {@code off} leaves every store with Kafka Streams' own per-store defaults, for comparison):
 * half of it is one LRU block cache shared by all stores (data, index and filter blocks all count against it), the
 * other half the {@link dev.impipe.runtime.streams.MemtableBudget} of the budgeted stores (the ACK wheel's and the
 * delay app's). Without the cache each store (and each segment of a window store) has its own 50 MB cache, so RSS
 * grows with the number of stores and with the state held.
 *
 * <p>Memtables are not charged to a RocksDB write-buffer manager: that stalled writes. Once a store that is no longer
 * written (the ACK wheel after a burst of timers) held most of the budget in its memtables, every write to another
 * store flushed that store's small memtable, and its writes waited for the flush queue (bench scale: schedules taken
 * in at ~330/s after the first 64k instead of 80k/s with {@code off}). RocksDB flushes only the store being written,
 * never an idle one; the memtable budget flushes the largest stores instead.
 *
 * <p>The cache is created by the first store that is configured and shared by every store after it, across all
 * Streams apps of the JVM; it is never closed (it lives as long as the process). Kafka Streams' default whole-key
 * Bloom filter stays on (point lookups); the pipeline's range scans seek on variable-length prefixes (ids, user ids),
 * for which a fixed-length prefix extractor would not apply.
 */
public class SharedRocksDBMemory implements RocksDBConfigSetter {

  public static final String IM_ROCKSDB_MEMORY = "IM_ROCKSDB_MEMORY";
  /** The Streams property carrying the cache size in bytes (set by the runtime: half of {@link #IM_ROCKSDB_MEMORY}). */
  public static final String CONFIG_BYTES = "im.rocksdb.memory.bytes";
  public static final String DEFAULT_MEMORY_TEXT = "256m";
  public static final long DEFAULT_MEMORY_BYTES = 256L << 20;
  public static final Setting<Long> MEMORY = Setting.parsed(IM_ROCKSDB_MEMORY, "size", DEFAULT_MEMORY_BYTES,
      raw -> raw.equalsIgnoreCase("off") ? 0L : parseBytes(raw),
      "RocksDB memory of the process: half a block cache shared by every store, half the memtable budget of the "
          + "ACK wheel's and delay app's stores (`k`, `m`, `g` suffixes, 16m to 1024g); `off`: Kafka Streams' "
          + "per-store defaults")
      .defaultDoc("`" + DEFAULT_MEMORY_TEXT + "`");
  /**
   * Memtable Bloom filter size as a share of the write buffer, for stores that miss often: 64 KiB of a 16 MiB
   * memtable, about 10 bits per key for memtables of states of a few hundred bytes.
   */
  static final double MEMTABLE_FILTER_RATIO = 1.0 / 256;
  /** Share of the cache kept for index and filter blocks (high priority). */
  static final double HIGH_PRIORITY_SHARE = 0.1;

  private static Cache cache;
  private static long configuredBytes;

  /** The memory bound in bytes: plain bytes or a k / m / g suffix (binary units); 16 MiB to 1 TiB. */
  public static long parseBytes(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    long unit = 1;
    if (t.endsWith("k") || t.endsWith("m") || t.endsWith("g")) {
      char suffix = t.charAt(t.length() - 1);
      unit = suffix == 'k' ? 1L << 10 : suffix == 'm' ? 1L << 20 : 1L << 30;
      t = t.substring(0, t.length() - 1);
    }
    long bytes;
    try {
      bytes = Math.multiplyExact(Long.parseLong(t), unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new InvalidConfigException(IM_ROCKSDB_MEMORY + "='" + text + "' is not a size such as 256m or 1g");
    }
    if (bytes < (16L << 20) || bytes > (1L << 40)) {
      throw new InvalidConfigException(IM_ROCKSDB_MEMORY + "='" + text + "' must be between 16m and 1024g");
    }
    return bytes;
  }

  /** The size from the environment, or the default; 0 for {@code off} (each store keeps RocksDB's own defaults). */
  public static long bytesFromEnv(Map<String, String> env) {
    return MEMORY.read(env);
  }

  /** The size the shared cache was created with (0 before any store was configured). */
  public static synchronized long configuredBytes() {
    return configuredBytes;
  }

  private static synchronized void ensureShared(long bytes) {
    if (cache == null) {
      cache = new LRUCache(bytes, -1, false, HIGH_PRIORITY_SHARE);
      configuredBytes = bytes;
    }
  }

  @Override
  public void setConfig(String storeName, Options options, Map<String, Object> configs) {
    Object configured = configs.get(CONFIG_BYTES);
    ensureShared(configured == null ? DEFAULT_MEMORY_BYTES / 2 : Long.parseLong(configured.toString()));
    BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
    table.setBlockCache(cache);
    table.setCacheIndexAndFilterBlocks(true);
    table.setCacheIndexAndFilterBlocksWithHighPriority(true);
    table.setPinTopLevelIndexAndFilter(true);
    options.setTableFormatConfig(table);
    if (StoreSuppliers.missesOften(storeName)) {
      // A whole-key Bloom filter in each memtable: a read of a key the store does not hold skips the skip list.
      options.setMemtablePrefixBloomSizeRatio(MEMTABLE_FILTER_RATIO);
      options.setMemtableWholeKeyFiltering(true);
    }
  }

  @Override
  public void close(String storeName, Options options) {
    // The cache is shared by every store of the process: not closed here.
  }
}
