package dev.impipe.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The real Kafka broker ({@code kafka_2.13}) as a single combined broker+controller node in KRaft mode, bound to
 * 127.0.0.1 only. Storage is formatted on first start; a data dir that was formatted before is reused, so
 * everything survives a restart. A temporary data dir is deleted on close.
 */
public final class EmbeddedKafka implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafka.class);
  /** File in the data dir naming the security the storage was formatted with ({@code none} or {@code scram}). */
  static final String SECURITY_MARKER = "kafka-security";

  private final KafkaRaftServer server;
  private final Path dataDir;
  private final boolean deleteOnClose;
  private final int brokerPort;
  /** Null: plaintext, no authorizer. */
  private final BrokerSecurity security;
  private boolean closed;

  private EmbeddedKafka(KafkaRaftServer server, Path dataDir, boolean deleteOnClose, int brokerPort,
      BrokerSecurity security) {
    this.server = server;
    this.dataDir = dataDir;
    this.deleteOnClose = deleteOnClose;
    this.brokerPort = brokerPort;
    this.security = security;
  }

  /**
   * Starts a broker with SASL/SCRAM-SHA-512 and the standard authorizer ({@link BrokerSecurity}) on free ports with
   * a temporary data dir deleted on close; {@link #adminClientProperties()} logs in as its super user.
   */
  public static EmbeddedKafka startSecured(BrokerSecurity security) {
    try {
      int port = FreePorts.next();
      int cport = FreePorts.next();
      return start(Files.createTempDirectory("im-kafka-"), true, 1, port, cport, "1@127.0.0.1:" + cport,
          Uuid.randomUuid().toString(), Map.of(), Optional.of(security));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts a broker on free ports with a temporary data dir deleted on close. */
  public static EmbeddedKafka start() {
    try {
      return start(Files.createTempDirectory("im-kafka-"), true, 0, 0, Map.of());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts a broker.
   *
   * @param dataDir log dir; formatted if new, reused if formatted before
   * @param deleteOnClose whether {@link #close()} deletes {@code dataDir}
   * @param brokerPort client port, 0 for any free one
   * @param controllerPort KRaft controller port, 0 for any free one
   * @param overrides broker properties to add or replace
   */
  public static EmbeddedKafka start(Path dataDir, boolean deleteOnClose, int brokerPort, int controllerPort,
      Map<String, String> overrides) {
    return start(dataDir, deleteOnClose, brokerPort, controllerPort, overrides, Optional.empty());
  }

  /** As {@link #start(Path, boolean, int, int, Map)}, secured when {@code security} is present. */
  public static EmbeddedKafka start(Path dataDir, boolean deleteOnClose, int brokerPort, int controllerPort,
      Map<String, String> overrides, Optional<BrokerSecurity> security) {
    int port = brokerPort > 0 ? brokerPort : FreePorts.next();
    int cport = controllerPort > 0 ? controllerPort : FreePorts.next();
    return start(dataDir, deleteOnClose, 1, port, cport, "1@127.0.0.1:" + cport, Uuid.randomUuid().toString(),
        overrides, security);
  }

  /**
   * Starts one node of a multi-node cluster (combined broker+controller, static quorum): every node of the cluster
   * gets the same {@code voters} and {@code clusterId}; replication settings come in {@code overrides}
   * ({@link ClusterNodeMain} passes those of a three-node cluster). Blocks until a quorum of controllers answers,
   * so start the nodes concurrently.
   *
   * @param voters {@code id@127.0.0.1:controllerPort,...} of every node
   * @param clusterId used to format new storage only
   */
  public static EmbeddedKafka start(Path dataDir, boolean deleteOnClose, int nodeId, int port, int cport,
      String voters, String clusterId, Map<String, String> overrides) {
    return start(dataDir, deleteOnClose, nodeId, port, cport, voters, clusterId, overrides, Optional.empty());
  }

  /**
   * As {@link #start(Path, boolean, int, int, int, String, String, Map)}; with {@code security} the node runs
   * SASL/SCRAM and the standard authorizer ({@link BrokerSecurity}). Security is fixed when the storage is formatted
   * (the admin's SCRAM credential is written then): a data dir formatted one way is refused the other way.
   */
  public static EmbeddedKafka start(Path dataDir, boolean deleteOnClose, int nodeId, int port, int cport,
      String voters, String clusterId, Map<String, String> overrides, Optional<BrokerSecurity> security) {
    Path logDir = dataDir.resolve("kafka-logs");
    Properties props = new Properties();
    props.put("process.roles", "broker,controller");
    props.put("node.id", Integer.toString(nodeId));
    props.put("controller.quorum.voters", voters);
    props.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + cport);
    props.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
    props.put("controller.listener.names", "CONTROLLER");
    props.put("inter.broker.listener.name", "PLAINTEXT");
    props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    props.put("log.dirs", logDir.toString());
    // Single node: internal topics with one replica, or exactly-once cannot start.
    props.put("offsets.topic.replication.factor", "1");
    props.put("offsets.topic.num.partitions", "6");
    props.put("transaction.state.log.replication.factor", "1");
    props.put("transaction.state.log.min.isr", "1");
    props.put("transaction.state.log.num.partitions", "6");
    props.put("share.coordinator.state.topic.replication.factor", "1");
    props.put("share.coordinator.state.topic.min.isr", "1");
    props.put("group.initial.rebalance.delay.ms", "0");
    props.put("num.partitions", "1");
    props.put("auto.create.topics.enable", "false");
    props.put("log.segment.bytes", Integer.toString(64 * 1024 * 1024));
    // Index files are preallocated sparse files (10 MB each by default) that the broker maps into memory. On this
    // kernel (6.18, ext4 with large folios) a write to a page not yet cached zero-fills a large folio of the sparse
    // file: with ~570 partitions written at once, the push benchmark's broker spent 65 % of its CPU in the kernel,
    // most of it zeroing pages (perf: memset <- ext4_mpage_readpages <- filemap_fault <- OffsetIndex.append /
    // TimeIndex.maybeAppend). A 64 MB segment needs at most 64 MB / log.index.interval.bytes (4 KB) = 16,384 entries,
    // 192 KB of time index: 1 MB is ample, and a full index only rolls the segment early.
    props.put("log.index.size.max.bytes", Integer.toString(1024 * 1024));
    security.ifPresent(sec -> props.putAll(sec.brokerProperties(port, cport)));
    props.putAll(overrides);
    Path securityMarker = dataDir.resolve(SECURITY_MARKER);
    String wanted = security.isPresent() ? "scram" : "none";
    try {
      Files.createDirectories(logDir);
      boolean formatted = Files.exists(logDir.resolve("meta.properties"));
      String formattedWith = Files.exists(securityMarker) ? Files.readString(securityMarker).trim() : "none";
      if (formatted && !formattedWith.equals(wanted)) {
        throw new IllegalStateException("the data dir " + dataDir + " was created with Kafka security '"
            + formattedWith + "' and cannot be reused with '" + wanted + "': use another data dir");
      }
      KafkaConfig config = new KafkaConfig(props, false);
      if (!formatted) {
        Formatter formatter = new Formatter();
        security.ifPresent(sec -> formatter.setScramArguments(List.of(sec.scramFormatArgument())));
        formatter
            .setPrintStream(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()))
            .setNodeId(nodeId)
            .setClusterId(clusterId)
            .setDirectories(List.of(logDir.toString()))
            .setMetadataLogDirectory(config.metadataLogDir())
            .setControllerListenerName("CONTROLLER")
            .setReleaseVersion(MetadataVersion.latestProduction())
            .run();
        Files.writeString(securityMarker, wanted);
      }
      KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
      server.startup();
      EmbeddedKafka kafka = new EmbeddedKafka(server, dataDir, deleteOnClose, port, security.orElse(null));
      kafka.awaitReady(Duration.ofSeconds(120));
      LOG.info("Embedded Kafka {} ready on {} (data in {}{})", kafkaVersion(), kafka.bootstrapServers(), dataDir,
          security.map(s -> ", SASL/SCRAM-SHA-512 + StandardAuthorizer").orElse(""));
      return kafka;
    } catch (Exception e) {
      throw new IllegalStateException("Embedded Kafka failed to start in " + dataDir + ": " + e.getMessage(), e);
    }
  }

  private void awaitReady(Duration timeout) throws Exception {
    try (Admin admin = Admin.create(adminClientProperties())) {
      admin.describeCluster().nodes().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  public String bootstrapServers() {
    return "127.0.0.1:" + brokerPort;
  }

  /** Client properties of the super user ({@code bootstrap.servers} and, when secured, its SASL login). */
  public Map<String, Object> adminClientProperties() {
    Map<String, Object> props = new java.util.HashMap<>();
    if (security != null) {
      props.putAll(security.adminClientProperties());
    }
    props.put("bootstrap.servers", bootstrapServers());
    return props;
  }

  /** The broker's security, empty when it runs plaintext without an authorizer. */
  public Optional<BrokerSecurity> security() {
    return Optional.ofNullable(security);
  }

  public int port() {
    return brokerPort;
  }

  public Path dataDir() {
    return dataDir;
  }

  static String kafkaVersion() {
    return org.apache.kafka.common.utils.AppInfoParser.getVersion();
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    server.shutdown();
    server.awaitShutdown();
    if (deleteOnClose) {
      Dirs.deleteRecursively(dataDir);
    }
  }
}
