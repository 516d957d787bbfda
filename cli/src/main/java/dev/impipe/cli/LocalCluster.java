package dev.impipe.cli;

import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.embedded.ClusterNodeMain;
import dev.impipe.embedded.Dirs;
import dev.impipe.embedded.EmbeddedSchemaRegistry;
import dev.impipe.embedded.FreePorts;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Uuid;

/**
 * {@code bin/im local --brokers N --instances M}: N Kafka nodes (KRaft, combined broker+controller) and M pipeline
 * instances (every component, {@code bin/im run}), each in a JVM of its own started with this JVM's class path, so
 * an operator or a test can kill any one of them. The schema registry runs as in single-process local mode. Every
 * process id is printed with its role and port; a child that dies is started again (same ports, same data) unless
 * restarts are off (tests restart by hand). Closing stops the instances, the registry, then the brokers.
 */
public final class LocalCluster implements AutoCloseable, ClusterChild.Owner {

  /** Heap of a Kafka node / pipeline instance child (override: {@code IM_BROKER_JAVA_OPTS}, {@code IM_INSTANCE_JAVA_OPTS}). */
  static final String BROKER_JAVA_OPTS = "-Xms128m -Xmx512m";
  static final String INSTANCE_JAVA_OPTS = "-Xms128m -Xmx1g";
  static final Duration RESTART_DELAY = Duration.ofSeconds(3);

  private final PrintStream log;
  private final boolean autoRestart;
  private final long t0 = System.nanoTime();
  private final List<ClusterChild> brokers = new ArrayList<>();
  private final List<ClusterChild> instances = new ArrayList<>();
  private volatile boolean closing;
  private Path tempDir;
  private EmbeddedSchemaRegistry registry;
  private String bootstrap;
  private String registryUrl;
  private Endpoints endpoints;
  private Map<String, String> env = Map.of();
  private Optional<Path> secretFile = Optional.empty();

  /** Not started yet: {@link #boot}; {@link #close()} stops whatever boot started so far. */
  LocalCluster(PrintStream log, boolean autoRestart) {
    this.log = log;
    this.autoRestart = autoRestart;
  }

  /**
   * Starts the cluster and waits until every instance is healthy.
   *
   * @param brokers Kafka nodes to start (0: use {@code KAFKA_BOOTSTRAP_SERVERS})
   * @param instances pipeline processes; HTTP ports from {@code IM_HTTP_PORT} (default 8080) upwards
   * @param autoRestart start a child that exits again after {@link #RESTART_DELAY}
   */
  public static LocalCluster start(Map<String, String> env, Optional<Path> dataDir, int brokers, int instances,
      PrintStream log, boolean autoRestart) throws Exception {
    LocalCluster cluster = new LocalCluster(log, autoRestart);
    try {
      cluster.boot(env, dataDir, brokers, instances);
      return cluster;
    } catch (Exception | Error e) {
      cluster.close();
      throw e;
    }
  }

  void boot(Map<String, String> rawEnv, Optional<Path> dataDir, int brokerCount, int instanceCount)
      throws Exception {
    Path root = LocalLauncher.dataRoot(dataDir, "im-cluster-", this::step);
    tempDir = dataDir.isPresent() ? null : root;
    this.env = Map.copyOf(rawEnv);
    Map<String, String> childEnv = new HashMap<>(rawEnv);
    Optional<LocalKafkaSecurity> kafkaSecurity = LocalKafkaSecurity.configure(rawEnv, root);
    kafkaSecurity.ifPresent(s -> childEnv.putAll(s.clientEnv()));
    // The instances connect to the brokers started here with the logins above: they start no brokers to secure
    // (set, not removed: a child inherits this process's environment).
    childEnv.put(LocalKafkaSecurity.IM_KAFKA_SECURITY, "none");
    ImConfig config = ImConfig.fromEnv(childEnv);
    LocalAuth.Setup auth = LocalAuth.configure(childEnv, root);
    secretFile = auth.secretFile();
    step(auth.describe());
    step(LocalNotify.configure(childEnv, root));
    Properties ports = LocalLauncher.loadPorts(root);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath = System.getProperty("java.class.path");

    int replication;
    if (config.bootstrapServers().isPresent()) {
      bootstrap = config.bootstrapServers().get();
      replication = config.replicationFactor();
      step("using Kafka at " + bootstrap + " (KAFKA_BOOTSTRAP_SERVERS)");
    } else {
      replication = Math.min(3, brokerCount);
      String clusterId = clusterId(root);
      List<Integer> brokerPorts = new ArrayList<>();
      List<String> voters = new ArrayList<>();
      for (int i = 1; i <= brokerCount; i++) {
        brokerPorts.add(LocalLauncher.port(ports, "broker." + i, 0));
        voters.add(i + "@127.0.0.1:" + LocalLauncher.port(ports, "controller." + i, 0));
      }
      LocalLauncher.savePorts(root, ports);
      for (int i = 1; i <= brokerCount; i++) {
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(List.of(CliConfig.BROKER_JAVA_OPTS.read(rawEnv).trim().split("\\s+")));
        command.addAll(List.of("-cp", classPath, ClusterNodeMain.class.getName(),
            "--node-id", Integer.toString(i), "--nodes", Integer.toString(brokerCount),
            "--data-dir", root.resolve("broker-" + i).toString(), "--port", brokerPorts.get(i - 1).toString(),
            "--controller-port", voters.get(i - 1).substring(voters.get(i - 1).lastIndexOf(':') + 1),
            "--voters", String.join(",", voters), "--cluster-id", clusterId,
            "--parent-pid", Long.toString(ProcessHandle.current().pid())));
        if (kafkaSecurity.isPresent()) {
          command.addAll(List.of("--admin-password-file", root.resolve(LocalKafkaSecurity.ADMIN_FILE).toString()));
        }
        brokers.add(new ClusterChild(this, ClusterChild.Role.BROKER, i, brokerPorts.get(i - 1), command, Map.of(),
            root.resolve("logs").resolve("broker-" + i + ".log")));
      }
      // Concurrently: a node is ready only once a quorum of controllers answers.
      for (ClusterChild b : brokers) {
        b.launch();
      }
      for (ClusterChild b : brokers) {
        b.awaitReady(Duration.ofMinutes(3));
        step(b.describe());
      }
      bootstrap = brokerPorts.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
      step("Kafka " + org.apache.kafka.common.utils.AppInfoParser.getVersion() + " cluster: " + brokerCount
          + " brokers (KRaft), replication factor " + replication + ", min.insync.replicas "
          + ClusterNodeMain.minInsyncReplicas(replication));
      kafkaSecurity.ifPresent(s -> step(s.describe()));
    }

    if (config.schemaRegistryUrl().isPresent()) {
      registryUrl = config.schemaRegistryUrl().get();
      step("using schema registry at " + registryUrl + " (SCHEMA_REGISTRY_URL)");
    } else {
      int registryPort = LocalLauncher.port(ports, "registry", 0);
      registry = EmbeddedSchemaRegistry.start(registryPort,
          dataDir.isPresent() ? Optional.of(bootstrap) : Optional.empty(), root.resolve("registry"),
          kafkaSecurity.map(s -> s.broker().adminClientProperties()).orElse(Map.of()));
      registryUrl = registry.url();
      step("schema registry (Apicurio " + (dataDir.isPresent() ? "kafkasql" : "in-memory") + ") at " + registryUrl);
    }

    ImConfig clusterConfig = config.withEndpoints(bootstrap, registryUrl);
    TopicNames names = TopicNames.withPrefix(clusterConfig.topicPrefix());
    try (Admin admin = Admin.create(kafkaSecurity.isPresent()
        ? kafkaSecurity.get().adminClientProperties(bootstrap) : clusterConfig.clientProperties())) {
      List<String> created = new TopicProvisioner(admin, (short) replication)
          .ensure(TopicCatalog.specs(names, clusterConfig));
      step("topics ready (" + created.size() + " created, prefix '" + clusterConfig.topicPrefix()
          + "', replication factor " + replication + ")");
      if (kafkaSecurity.isPresent()) {
        kafkaSecurity.get().provision(admin, clusterConfig.topicPrefix(),
            ImConfig.INBOX_GENERATION.read(rawEnv));
        step("Kafka principals and ACLs ready (one principal per component, docs/security.md)");
      }
    }

    int httpBase = rawEnv.get(ImConfig.IM_HTTP_PORT) != null ? config.httpPort()
        : Integer.parseInt(ports.getProperty("http.1",
            Integer.toString(FreePorts.preferredRun(config.httpPort(), instanceCount))));
    ports.setProperty("http.1", Integer.toString(httpBase));
    LocalLauncher.savePorts(root, ports);
    String standby = Integer.toString(standbyDefault(rawEnv, instanceCount));
    for (int i = 1; i <= instanceCount; i++) {
      Path dir = root.resolve("instance-" + i);
      Map<String, String> e = new HashMap<>(childEnv);
      e.put(ImConfig.KAFKA_BOOTSTRAP_SERVERS, bootstrap);
      e.put(ImConfig.SCHEMA_REGISTRY_URL, registryUrl);
      e.put(ImConfig.IM_HTTP_PORT, Integer.toString(httpBase + i - 1));
      e.put(ImConfig.IM_STATE_DIR, dir.resolve("streams").toString());
      e.put(ImConfig.IM_REPLICATION_FACTOR, Integer.toString(replication));
      e.put(PipelineRuntime.IM_STANDBY_REPLICAS, standby);
      e.put(Endpoints.IM_LOCAL_ENDPOINTS_FILE, dir.resolve("endpoints.properties").toString());
      e.put(LocalCommand.IM_PARENT_PID, Long.toString(ProcessHandle.current().pid()));
      List<String> command = new ArrayList<>();
      command.add(java);
      command.addAll(List.of(CliConfig.INSTANCE_JAVA_OPTS.read(rawEnv).trim().split("\\s+")));
      command.addAll(List.of("-cp", classPath, Main.class.getName(), "run", "--data-dir", dir.toString()));
      instances.add(new ClusterChild(this, ClusterChild.Role.INSTANCE, i, httpBase + i - 1, command, e,
          root.resolve("logs").resolve("instance-" + i + ".log")));
    }
    // Instance 1 listens on IM_HTTP_PORT, the address users and scripts wait on: it starts last, once the others are
    // healthy, so its /health answering 200 means the whole local cluster is up (started together, whichever
    // instance won the race answered first while the others were still joining).
    List<ClusterChild> others = instances.subList(1, instances.size());
    for (ClusterChild c : others) {
      c.launch();
    }
    for (ClusterChild c : others) {
      c.awaitReady(Duration.ofMinutes(10));
      step(c.describe());
    }
    ClusterChild front = instances.get(0);
    front.launch();
    front.awaitReady(Duration.ofMinutes(10));
    step(front.describe());
    step("healthy: " + instanceCount + " instance(s), every Streams app RUNNING (standby replicas " + standby + ")");
    endpoints = new Endpoints(bootstrap, registryUrl, httpUrl(1), ProcessHandle.current().pid(), secretFile);
    endpoints.write(env);
  }

  private static String clusterId(Path root) throws IOException {
    Path file = root.resolve("kafka-cluster.id");
    if (Files.exists(file)) {
      return Files.readString(file, StandardCharsets.US_ASCII).trim();
    }
    String id = Uuid.randomUuid().toString();
    Files.writeString(file, id, StandardCharsets.US_ASCII);
    return id;
  }

  @Override
  public void onExit(ClusterChild child, Process exited) {
    if (closing || child.process() != exited) {
      return;
    }
    if (!autoRestart) {
      step(child + " (pid " + exited.pid() + ") exited with " + exited.exitValue());
      return;
    }
    step(child + " (pid " + exited.pid() + ") exited with " + exited.exitValue() + "; starting it again in "
        + RESTART_DELAY.toSeconds() + " s");
    Thread restarter = new Thread(() -> {
      try {
        Thread.sleep(RESTART_DELAY.toMillis()); // give an operator's kill a moment to be seen before the restart
        if (!closing) {
          child.restart();
        }
      } catch (Exception e) {
        step("could not restart " + child + ": " + e.getMessage());
      }
    }, "im-restart-" + child.role() + "-" + child.number());
    restarter.setDaemon(true);
    restarter.start();
  }

  public List<ClusterChild> brokers() {
    return List.copyOf(brokers);
  }

  public List<ClusterChild> instances() {
    return List.copyOf(instances);
  }

  public String bootstrapServers() {
    return bootstrap;
  }

  public String schemaRegistryUrl() {
    return registryUrl;
  }

  /** The HTTP base URL of instance {@code number} (1-based). */
  public String httpUrl(int number) {
    return "http://127.0.0.1:" + instances.get(number - 1).port();
  }

  public Optional<Path> secretFile() {
    return secretFile;
  }

  public Endpoints endpoints() {
    return endpoints;
  }

  @Override
  public void step(String message) {
    synchronized (log) {
      log.printf(Locale.ROOT, "[im] %6.1fs  %s%n", (System.nanoTime() - t0) / 1e9, message);
      log.flush();
    }
  }

  @Override
  public synchronized void close() {
    closing = true;
    if (endpoints != null) {
      endpoints.remove(env);
    }
    // Instances first (each commits and leaves its groups), then the registry, then the brokers, all at once: one
    // by one, the last broker would wait out a controlled shutdown that a controller quorum of one cannot grant.
    stopAll(instances, Duration.ofSeconds(60));
    if (registry != null) {
      registry.close();
    }
    stopAll(brokers, BROKER_STOP);
    if (tempDir != null) {
      Dirs.deleteRecursively(tempDir);
      tempDir = null;
    }
  }

  /** How long brokers get for an orderly stop before they are killed (their logs recover on the next start). */
  static final Duration BROKER_STOP = Duration.ofSeconds(15);

  /** SIGTERM to every live process of {@code children} at once, then waits for each until one shared deadline. */
  private static void stopAll(List<ClusterChild> children, Duration timeout) {
    List<ClusterChild> running = children.stream().filter(ClusterChild::alive).toList();
    running.forEach(c -> c.process().destroy());
    long deadline = System.nanoTime() + timeout.toNanos();
    for (ClusterChild c : running) {
      try {
        long left = Math.max(0, deadline - System.nanoTime());
        if (!c.process().waitFor(left, TimeUnit.NANOSECONDS)) {
          c.process().destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        c.process().destroyForcibly();
      }
    }
  }

  /** {@code IM_STANDBY_REPLICAS}, else 1 with several instances (docs/operations/cluster-mode.md), else 0. */
  static int standbyDefault(Map<String, String> env, int instances) {
    return PipelineRuntime.STANDBY_REPLICAS.isSet(env) ? PipelineRuntime.STANDBY_REPLICAS.read(env)
        : instances > 1 ? 1 : 0;
  }
}
