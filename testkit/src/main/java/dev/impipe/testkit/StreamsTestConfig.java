package dev.impipe.testkit;

import dev.impipe.runtime.app.SharedRocksDBMemory;
import dev.impipe.runtime.app.StreamsDefaults;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.embedded.Dirs;
import dev.impipe.runtime.topics.TopicNames;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;
import org.rocksdb.Options;

/**
 * The Streams settings of tests: production's ({@link StreamsDefaults#properties}: exactly-once v2, the dead-letter
 * topic and exception handlers, the shared RocksDB settings), with only what a test needs changed. A test that builds
 * its own {@code Properties} could pass on settings production never uses.
 *
 * <pre>{@code
 * driver = new TopologyTestDriver(FanoutTopology.build(...), StreamsTestConfig.forDriver("fanout"), T0);
 * streams = new KafkaStreams(topology, StreamsTestConfig.forBroker(env.bootstrapServers(), names, appId, stateDir));
 * }</pre>
 */
public final class StreamsTestConfig {

  private static final String DUMMY_BOOTSTRAP = "dummy:9092";

  private StreamsTestConfig() {}

  /** For a TopologyTestDriver: production settings, default topic names, a fresh state dir. */
  public static Properties forDriver(String appName) {
    return forDriver(appName, TopicNames.withPrefix(ImConfig.fromEnv(Map.of()).topicPrefix()));
  }

  /** For a TopologyTestDriver whose topics have {@code names}' prefix (the dead-letter topic among them). */
  public static Properties forDriver(String appName, TopicNames names) {
    return forDriver(appName, names, TestStateDirs.next(appName));
  }

  /**
   * For a TopologyTestDriver on a given state dir (a test that closes a driver and opens another on the same
   * state). Stores are set up to open and close cheaply ({@link DriverRocksDB}).
   */
  public static Properties forDriver(String appName, TopicNames names, Path stateDir) {
    Properties props = production(DUMMY_BOOTSTRAP, names, appName, stateDir);
    props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, DriverRocksDB.class);
    return props;
  }

  /**
   * For a test's own KafkaStreams on a real broker: production settings with the test's application id (used as
   * is, not prefixed) and state dir; the dead-letter topic is {@code names.rejected()}. Tests may add what they
   * need to see results sooner (commit interval, session timeouts).
   */
  public static Properties forBroker(String bootstrap, TopicNames names, String applicationId, Path stateDir) {
    Properties props = production(bootstrap, names, applicationId, stateDir);
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
    return props;
  }

  private static Properties production(String bootstrap, TopicNames names, String appName, Path stateDir) {
    ImConfig config = ImConfig.fromEnv(Map.of(ImConfig.IM_STATE_DIR, stateDir.toString()))
        .withEndpoints(bootstrap, "mock://" + appName);
    Properties props = StreamsDefaults.properties(config, names, appName);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    return props;
  }

  /**
   * The production RocksDB settings plus what makes a store cheap to open and close in a test driver (thousands of
   * drivers in a mutation-testing run): a small manifest preallocation, no statistics dumps, no flush at close (a
   * test driver's state is thrown away).
   */
  public static final class DriverRocksDB extends SharedRocksDBMemory {
    @Override
    public void setConfig(String storeName, Options options, Map<String, Object> configs) {
      super.setConfig(storeName, options, configs);
      options.setManifestPreallocationSize(64 * 1024);
      options.setStatsDumpPeriodSec(0);
      options.setStatsPersistPeriodSec(0);
      options.setSkipStatsUpdateOnDbOpen(true);
      options.setAvoidFlushDuringShutdown(true);
      options.setKeepLogFileNum(1);
      options.setInfoLogLevel(org.rocksdb.InfoLogLevel.FATAL_LEVEL);
    }
  }

  /**
   * The state dirs of test drivers. A closed TopologyTestDriver leaves its RocksDB files behind (about 25 MB
   * allocated per driver, mostly preallocated manifests), and a mutation-testing run creates thousands of drivers:
   * so one root per JVM, deleted at exit, of which only the {@value #KEPT} newest driver dirs are kept (a test closes
   * its drivers long before that many more are made). The root is on {@code /dev/shm} where there is one: opening
   * and closing a store syncs several files, which on a disk is most of a driver test's time.
   */
  static final class TestStateDirs {
    static final int KEPT = 16;
    private static final Deque<Path> RECENT = new ArrayDeque<>();
    private static Path root;

    private TestStateDirs() {}

    private static final String PREFIX = "im-ttd-";

    /**
     * Deletes the roots of JVMs that are gone without running their shutdown hook (a mutation-testing minion is
     * killed when its time is up): {@code im-ttd-<pid>-...} whose process no longer exists.
     */
    static void removeOrphans(Path parent) {
      try (var dirs = Files.newDirectoryStream(parent, PREFIX + "*")) {
        for (Path dir : dirs) {
          String[] parts = dir.getFileName().toString().split("-");
          if (parts.length >= 4 && parts[2].chars().allMatch(Character::isDigit) && !parts[2].isEmpty()
              && ProcessHandle.of(Long.parseLong(parts[2])).isEmpty()) {
            Dirs.deleteRecursively(dir);
          }
        }
      } catch (IOException | RuntimeException e) {
        // best effort: another JVM may be deleting the same orphan
      }
    }

    static synchronized Path next(String appName) {
      try {
        if (root == null) {
          Path shm = Path.of("/dev/shm");
          Path parent = Files.isDirectory(shm) && Files.isWritable(shm)
              ? shm : Path.of(System.getProperty("java.io.tmpdir"));
          removeOrphans(parent);
          root = Files.createTempDirectory(parent, PREFIX + ProcessHandle.current().pid() + "-");
          Path created = root;
          Runtime.getRuntime().addShutdownHook(new Thread(() -> Dirs.deleteRecursively(created), "im-ttd-cleanup"));
        }
        while (RECENT.size() >= KEPT) {
          Dirs.deleteRecursively(RECENT.removeFirst());
        }
        Path dir = Files.createTempDirectory(root, appName + "-");
        RECENT.addLast(dir);
        return dir;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
