package dev.impipe.cli;

import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.RegistrySettings;
import dev.impipe.embedded.Dirs;
import dev.impipe.embedded.EmbeddedKafka;
import dev.impipe.embedded.EmbeddedSchemaRegistry;
import dev.impipe.embedded.FreePorts;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
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
import java.util.ServiceLoader;
import org.apache.kafka.clients.admin.Admin;

/**
 * The all-in-one local mode: embedded broker and registry (unless given), topics, every pipeline component found on
 * the class path, the HTTP API. Closing it stops everything in reverse order.
 */
public final class LocalLauncher implements AutoCloseable {

  /** Preferred ports when free, so a second shell can guess them; any free port otherwise. */
  static final int PREFERRED_BROKER_PORT = 9092;
  static final int PREFERRED_REGISTRY_PORT = 8081;
  /** Comma-separated component names to run (default: all). */
  static final String IM_COMPONENTS = "IM_COMPONENTS";

  private final List<AutoCloseable> resources = new ArrayList<>();
  private final PrintStream log;
  private final long t0 = System.nanoTime();
  private Path tempDir;
  private PipelineRuntime runtime;
  private Endpoints endpoints;
  private Map<String, String> env = Map.of();

  private LocalLauncher(PrintStream log) {
    this.log = log;
  }

  /**
   * Starts everything.
   *
   * @param env environment (IM_*, KAFKA_*, SCHEMA_REGISTRY_URL)
   * @param dataDir keep data here across restarts; empty = a temp dir deleted on close
   * @param log where the one-line progress steps go
   */
  public static LocalLauncher start(Map<String, String> env, Optional<Path> dataDir, PrintStream log)
      throws Exception {
    LocalLauncher launcher = new LocalLauncher(log);
    try {
      launcher.boot(env, dataDir);
      return launcher;
    } catch (Exception | Error e) {
      launcher.close();
      throw e;
    }
  }

  private void boot(Map<String, String> rawEnv, Optional<Path> dataDir) throws Exception {
    Path root = dataRoot(dataDir, "im-local-", this::step);
    tempDir = dataDir.isPresent() ? null : root;
    Map<String, String> env = new HashMap<>(rawEnv);
    this.env = Map.copyOf(rawEnv);
    org.slf4j.LoggerFactory.getLogger(LocalLauncher.class)
        .info("Config of {}", CliConfig.TABLE.read(rawEnv).describe());
    env.putIfAbsent(ImConfig.IM_STATE_DIR, root.resolve("streams").toString());
    Optional<LocalKafkaSecurity> kafkaSecurity = LocalKafkaSecurity.configure(env, root);
    kafkaSecurity.ifPresent(s -> env.putAll(s.clientEnv()));
    ImConfig config = ImConfig.fromEnv(env);
    // Before the broker starts, so a bad IM_AUTH_* value stops local mode at once.
    LocalAuth.Setup auth = LocalAuth.configure(env, root);
    step(auth.describe());
    step(LocalNotify.configure(env, root));
    Properties ports = loadPorts(root);

    String bootstrap;
    if (config.bootstrapServers().isPresent()) {
      bootstrap = config.bootstrapServers().get();
      step("using Kafka at " + bootstrap + " (KAFKA_BOOTSTRAP_SERVERS)");
    } else {
      int brokerPort = port(ports, "broker", PREFERRED_BROKER_PORT);
      int controllerPort = port(ports, "controller", 0);
      EmbeddedKafka kafka = EmbeddedKafka.start(root.resolve("kafka"), false, brokerPort, controllerPort, Map.of(),
          kafkaSecurity.map(LocalKafkaSecurity::broker));
      resources.add(kafka);
      bootstrap = kafka.bootstrapServers();
      step("Kafka " + org.apache.kafka.common.utils.AppInfoParser.getVersion() + " broker (KRaft, embedded) at "
          + bootstrap);
      kafkaSecurity.ifPresent(s -> step(s.describe()));
    }

    String registryUrl;
    if (config.schemaRegistryUrl().isPresent()) {
      registryUrl = config.schemaRegistryUrl().get();
      step("using schema registry at " + registryUrl + " (SCHEMA_REGISTRY_URL)");
    } else {
      int registryPort = port(ports, "registry", PREFERRED_REGISTRY_PORT);
      // With a data dir the registry keeps its schemas in a Kafka topic, so stored records stay readable.
      EmbeddedSchemaRegistry registry = EmbeddedSchemaRegistry.start(registryPort,
          dataDir.isPresent() ? Optional.of(bootstrap) : Optional.empty(), root.resolve("registry"),
          kafkaSecurity.map(s -> s.broker().adminClientProperties()).orElse(Map.of()));
      resources.add(registry);
      registryUrl = registry.url();
      step("schema registry (Apicurio " + (dataDir.isPresent() ? "kafkasql" : "in-memory") + ") at " + registryUrl);
    }
    if (rawEnv.get(ImConfig.IM_HTTP_PORT) == null) {
      config = config.withHttpPort(port(ports, "http", config.httpPort()), config.stateDir());
    }
    savePorts(root, ports);
    config = config.withEndpoints(bootstrap, registryUrl);

    TopicNames names = TopicNames.withPrefix(config.topicPrefix())
        .inGeneration(ImConfig.INBOX_GENERATION.read(env));
    try (Admin admin = Admin.create(kafkaSecurity.isPresent()
        ? kafkaSecurity.get().adminClientProperties(bootstrap) : config.clientProperties())) {
      List<String> created = new TopicProvisioner(admin, config.replicationFactor())
          .ensure(TopicCatalog.specs(names, config));
      step("topics ready (" + created.size() + " created, prefix '" + config.topicPrefix() + "')");
      if (kafkaSecurity.isPresent()) {
        kafkaSecurity.get().provision(admin, config.topicPrefix(), names.generation());
        step("Kafka principals and ACLs ready (one principal per component, docs/security.md)");
      }
    }

    // A client of its own: an earlier launch in this JVM may have met another registry behind the same URL.
    ImTopics topics = new ImTopics(names, SchemaRegistryClients.create(registryUrl,
        RegistrySettings.fromEnv(env)));
    runtime = new PipelineRuntime(config, env, topics);
    resources.add(runtime);
    List<PipelineComponent> components = selectComponents(CliConfig.COMPONENTS.read(env));
    runtime.start(components);
    step("components started: " + (components.isEmpty() ? "(none)"
        : String.join(", ", components.stream().map(PipelineComponent::name).sorted().toList())));

    String httpUrl = "http://127.0.0.1:" + runtime.http().port();
    endpoints = new Endpoints(bootstrap, registryUrl, httpUrl, ProcessHandle.current().pid(), auth.secretFile());
    endpoints.write(this.env);
  }

  /**
   * The components to run: every one on the class path, or the comma-separated names in {@code IM_COMPONENTS}
   * (e.g. {@code fanout} for a fan-out-only instance); an unknown name is an error listing the known ones.
   */
  static List<PipelineComponent> selectComponents(String names) {
    List<PipelineComponent> all = new ArrayList<>();
    ServiceLoader.load(PipelineComponent.class).forEach(all::add);
    if (names == null || names.isBlank()) {
      return all;
    }
    List<PipelineComponent> chosen = new ArrayList<>();
    for (String name : names.split(",")) {
      String wanted = name.trim();
      chosen
          .add(all.stream().filter(c -> c.name().equals(wanted)).findFirst()
              .orElseThrow(() -> new dev.impipe.runtime.config.InvalidConfigException(IM_COMPONENTS
                  + ": unknown component '" + wanted
                  + "'; known: " + String.join(", ", all.stream().map(PipelineComponent::name).sorted().toList()))));
    }
    return chosen;
  }

  /** Blocks until every Streams app is RUNNING (what {@code /health} reports). */
  public void awaitHealthy(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!runtime.healthy()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("Streams apps not RUNNING after " + timeout.toSeconds() + " s: "
            + runtime.streams().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue().state()).toList());
      }
      synchronized (this) {
        wait(100);
      }
    }
    step("healthy: every Streams app RUNNING");
  }

  public Endpoints endpoints() {
    return endpoints;
  }

  public PipelineRuntime runtime() {
    return runtime;
  }

  /** The given data dir (created if missing), or a fresh temporary one that the caller removes on exit. */
  static Path dataRoot(Optional<Path> dataDir, String tempPrefix, java.util.function.Consumer<String> step)
      throws IOException {
    if (dataDir.isPresent()) {
      Path root = dataDir.get().toAbsolutePath();
      Files.createDirectories(root);
      step.accept("data dir " + root + " (kept across restarts)");
      return root;
    }
    Path root = Files.createTempDirectory(tempPrefix);
    step.accept("data dir " + root + " (temporary, removed on exit)");
    return root;
  }

  void step(String message) {
    log.printf(Locale.ROOT, "[im] %6.1fs  %s%n", (System.nanoTime() - t0) / 1e9, message);
    log.flush();
  }

  static int port(Properties ports, String name, int preferred) {
    String saved = ports.getProperty(name);
    int port = FreePorts.preferred(saved != null ? Integer.parseInt(saved) : preferred);
    ports.setProperty(name, Integer.toString(port));
    return port;
  }

  static Properties loadPorts(Path root) throws IOException {
    Properties p = new Properties();
    Path file = root.resolve("ports.properties");
    if (Files.exists(file)) {
      try (InputStream in = Files.newInputStream(file)) {
        p.load(in);
      }
    }
    return p;
  }

  static void savePorts(Path root, Properties ports) throws IOException {
    try (OutputStream out = Files.newOutputStream(root.resolve("ports.properties"))) {
      ports.store(out, "ports chosen by bin/im local; reused on restart when free");
    }
  }

  @Override
  public synchronized void close() {
    if (endpoints != null) {
      endpoints.remove(env);
    }
    for (int i = resources.size() - 1; i >= 0; i--) {
      try {
        resources.get(i).close();
      } catch (Exception e) {
        log.println("[im] error while stopping " + resources.get(i) + ": " + e);
      }
    }
    resources.clear();
    if (tempDir != null) {
      Dirs.deleteRecursively(tempDir);
      tempDir = null;
    }
  }
}
