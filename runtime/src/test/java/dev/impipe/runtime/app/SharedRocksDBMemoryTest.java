package dev.impipe.runtime.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.InvalidConfigException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

class SharedRocksDBMemoryTest {

  @Test
  void theSizeIsReadInBinaryUnitsAndBounded() {
    assertThat(SharedRocksDBMemory.parseBytes("512m")).isEqualTo(512L << 20);
    assertThat(SharedRocksDBMemory.parseBytes("1g")).isEqualTo(1L << 30);
    assertThat(SharedRocksDBMemory.parseBytes("65536k")).isEqualTo(64L << 20);
    assertThat(SharedRocksDBMemory.parseBytes(Long.toString(32L << 20))).isEqualTo(32L << 20);
    assertThat(SharedRocksDBMemory.bytesFromEnv(Map.of())).isEqualTo(256L << 20);
    assertThat(SharedRocksDBMemory.bytesFromEnv(Map.of("IM_ROCKSDB_MEMORY", "2g"))).isEqualTo(2L << 30);
    assertThat(SharedRocksDBMemory.bytesFromEnv(Map.of("IM_ROCKSDB_MEMORY", "off"))).isZero();
    assertThatThrownBy(() -> SharedRocksDBMemory.parseBytes("1m")).isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("IM_ROCKSDB_MEMORY");
    assertThatThrownBy(() -> SharedRocksDBMemory.parseBytes("lots")).isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("IM_ROCKSDB_MEMORY");
  }

  @Test
  void everyStoreGetsTheOneSharedCacheAndKeepsItsOwnMemtables() {
    RocksDB.loadLibrary();
    SharedRocksDBMemory setter = new SharedRocksDBMemory();
    try (Options first = new Options(); Options second = new Options()) {
      first.setTableFormatConfig(new BlockBasedTableConfig());
      second.setTableFormatConfig(new BlockBasedTableConfig());
      setter.setConfig("a", first, Map.of(SharedRocksDBMemory.CONFIG_BYTES, Long.toString(64L << 20)));
      setter.setConfig("b", second, Map.of(SharedRocksDBMemory.CONFIG_BYTES, Long.toString(64L << 20)));

      // No shared write-buffer manager: it stalled the writes of one store while another held the budget.
      assertThat(first.writeBufferManager()).isNull();
      BlockBasedTableConfig table = (BlockBasedTableConfig) first.tableFormatConfig();
      assertThat(table.cacheIndexAndFilterBlocks()).isTrue();
      assertThat(table.pinTopLevelIndexAndFilter()).isTrue();
      assertThat(SharedRocksDBMemory.configuredBytes()).isPositive();
      setter.close("a", first);
      setter.close("b", second);
    }
  }
}
