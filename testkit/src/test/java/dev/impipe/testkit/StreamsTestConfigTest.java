package dev.impipe.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.app.SharedRocksDBMemory;
import dev.impipe.embedded.Dirs;
import dev.impipe.runtime.topics.TopicNames;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class StreamsTestConfigTest {

  @Test
  void testDriversGetTheProductionGuaranteesAndAFreshStateDirEach() {
    Properties a = StreamsTestConfig.forDriver("app-x");
    Properties b = StreamsTestConfig.forDriver("app-x");

    assertThat(a.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)).isEqualTo(StreamsConfig.EXACTLY_ONCE_V2);
    assertThat(a.get(StreamsConfig.STATE_DIR_CONFIG)).isNotEqualTo(b.get(StreamsConfig.STATE_DIR_CONFIG));
    assertThat(Path.of((String) a.get(StreamsConfig.STATE_DIR_CONFIG))).isDirectory();
  }

  @Test
  void onlyTheNewestDriverStateDirsAreKeptSoAMutationRunDoesNotFillTheDisk() throws Exception {
    // Given more drivers than are kept, each having written a file
    List<Path> dirs = new ArrayList<>();
    for (int i = 0; i < StreamsTestConfig.TestStateDirs.KEPT + 3; i++) {
      Path dir = Path.of((String) StreamsTestConfig.forDriver("app-y").get(StreamsConfig.STATE_DIR_CONFIG));
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

    StreamsTestConfig.TestStateDirs.removeOrphans(parent);

    assertThat(orphan.getParent()).doesNotExist();
    assertThat(live).isDirectory();
    assertThat(other).isDirectory();
    Dirs.deleteRecursively(parent);
  }

  @Test
  void testDriversUseTheProductionRocksDbSettingsPlusCheapOpenAndClose() {
    assertThat(StreamsTestConfig.forDriver("app-z").get(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG))
        .isEqualTo(StreamsTestConfig.DriverRocksDB.class);
    assertThat(SharedRocksDBMemory.class).isAssignableFrom(StreamsTestConfig.DriverRocksDB.class);
  }

  @Test
  void testsOnABrokerGetTheProductionSettingsWithTheirOwnApplicationIdAndDeadLetterTopic() throws Exception {
    Path state = Files.createTempDirectory("im-stc-test");
    Properties props = StreamsTestConfig.forBroker("127.0.0.1:9092", TopicNames.withPrefix("t1."), "t1.app", state);

    assertThat(props).containsEntry(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2)
        .containsEntry(StreamsConfig.APPLICATION_ID_CONFIG, "t1.app")
        .containsEntry(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9092")
        .containsEntry(StreamsConfig.STATE_DIR_CONFIG, state.toString())
        .containsEntry(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, "t1.rejected")
        .containsEntry(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, SharedRocksDBMemory.class);
    Dirs.deleteRecursively(state);
  }
}
