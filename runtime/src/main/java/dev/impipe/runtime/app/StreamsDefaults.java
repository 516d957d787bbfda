package dev.impipe.runtime.app;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.embedded.Dirs;
import dev.impipe.runtime.topics.TopicNames;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;

/**
 * The Streams settings every app of the pipeline runs with; tests (TopologyTestDriver) use the same ones so the
 * error handling they see is production's.
 */
public final class StreamsDefaults {

  private StreamsDefaults() {}

  /**
   * Exactly-once v2, and one bad record never stops a topology: a record that does not deserialize, or that a
   * processor rejects ({@link dev.impipe.runtime.streams.RejectedRecord}), goes to the rejected topic with reason
   * headers. Any other exception in a processor fails the stream thread ({@link DeadLetterProcessingExceptionHandler}).
   */
  public static Properties properties(ImConfig config, TopicNames names, String appName) {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, config.topicPrefix() + appName);
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    props.put(StreamsConfig.STATE_DIR_CONFIG, config.stateDir().toString());
    props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, (int) config.replicationFactor());
    if (config.replicationFactor() >= 3) {
      // Changelogs and repartition topics as durable as the pipeline's own topics (TopicProvisioner).
      props.put(StreamsConfig.topicPrefix("min.insync.replicas"), "2");
    }
    props.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, names.rejected());
    props.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueExceptionHandler.class);
    props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterProcessingExceptionHandler.class);
    props.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterProductionExceptionHandler.class);
    // A transaction's first write to a partition whose previous transaction's markers are still being written is
    // answered CONCURRENT_TRANSACTIONS and retried after retry.backoff.ms (default 100 ms, doubling to 1 s). With
    // transactions v2 that is every produce request of back-to-back transactions: at the default, each 100 ms
    // commit interval waited 100+ ms for it (measured in the push benchmark). The markers take a few ms.
    props.put(StreamsConfig.producerPrefix(ProducerConfig.RETRY_BACKOFF_MS_CONFIG), 5);
    // Off-heap memory of all stores bounded by one setting (IM_ROCKSDB_MEMORY, see SharedRocksDBMemory).
    props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, SharedRocksDBMemory.class);
    return props;
  }

  /** For TopologyTestDriver: the production settings with a dummy bootstrap and a fresh state dir. */
  public static Properties forTests(String appName) {
    String stateDir = TestStateDirs.next(appName).toString();
    ImConfig config = ImConfig.fromEnv(Map.of(ImConfig.IM_STATE_DIR, stateDir))
        .withEndpoints("dummy:9092", "mock://" + appName);
    Properties props = properties(config, TopicNames.withPrefix(config.topicPrefix()), appName);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:9092");
    props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, SharedRocksDBMemory.ForTests.class);
    return props;
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
