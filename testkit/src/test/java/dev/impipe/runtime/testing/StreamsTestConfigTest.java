package dev.impipe.runtime.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class StreamsDefaultsTest {

  @Test
  void testDriversGetTheProductionGuaranteesAndAFreshStateDirEach() {
    Properties a = StreamsDefaults.forTests("app-x");
    Properties b = StreamsDefaults.forTests("app-x");

    assertThat(a.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)).isEqualTo(StreamsConfig.EXACTLY_ONCE_V2);
    assertThat(a.get(StreamsConfig.STATE_DIR_CONFIG)).isNotEqualTo(b.get(StreamsConfig.STATE_DIR_CONFIG));
    assertThat(Path.of((String) a.get(StreamsConfig.STATE_DIR_CONFIG))).isDirectory();
  }

  @Test
  void onlyTheNewestDriverStateDirsAreKeptSoAMutationRunDoesNotFillTheDisk() throws Exception {
    // Given more drivers than are kept, each having written a file
    List<Path> dirs = new ArrayList<>();
    for (int i = 0; i < StreamsDefaults.TestStateDirs.KEPT + 3; i++) {
      Path dir = Path.of((String) StreamsDefaults.forTests("app-y").get(StreamsConfig.STATE_DIR_CONFIG));
      Files.writeString(dir.resolve("state"), "x");
      dirs.add(dir);
    }

    // Then the oldest three are gone and the newest KEPT are still there, all under one root
    assertThat(dirs.subList(0, 3)).allSatisfy(d -> assertThat(d).doesNotExist());
    assertThat(dirs.subList(3, dirs.size())).allSatisfy(d -> assertThat(d.resolve("state")).exists());
    assertThat(dirs.stream().map(Path::getParent).distinct()).hasSize(1);
  }

  @Test
  void theStateRootsOfJvmsThatDiedWithoutCleaningUpAreRemovedAndLiveOnesKept() throws Exception {
    // Given the root of a process that has exited (a killed mutation minion), ours, and an unrelated dir
    Process exited = new ProcessBuilder("true").start();
    exited.waitFor();
    Path parent = Files.createTempDirectory("im-ttd-test");
    Path orphan = Files.createDirectories(parent.resolve("im-ttd-" + exited.pid() + "-123").resolve("app-1"));
    Path live = Files.createDirectories(parent.resolve("im-ttd-" + ProcessHandle.current().pid() + "-456"));
    Path other = Files.createDirectories(parent.resolve("im-ttd-notapid"));

    StreamsDefaults.TestStateDirs.removeOrphans(parent);

    assertThat(orphan.getParent()).doesNotExist();
    assertThat(live).isDirectory();
    assertThat(other).isDirectory();
    dev.impipe.runtime.embedded.Dirs.deleteRecursively(parent);
  }

  @Test
  void testDriversUseTheProductionRocksDbSettingsPlusCheapOpenAndClose() {
    assertThat(StreamsDefaults.forTests("app-z").get(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG))
        .isEqualTo(SharedRocksDBMemory.ForTests.class);
    assertThat(SharedRocksDBMemory.class).isAssignableFrom(SharedRocksDBMemory.ForTests.class);
  }
}
