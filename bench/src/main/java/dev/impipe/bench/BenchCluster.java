package dev.impipe.bench;

import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.AuthConfig;
import dev.impipe.edge.auth.TokenIssuer;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.embedded.Dirs;
import dev.impipe.embedded.EmbeddedSchemaRegistry;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What a scenario runs against: a broker (a child JVM, unless one was given), a schema registry (Apicurio in a child
 * JVM, unless given), the pipeline's topics under a prefix of their own ({@code bench-<scenario>-<time>.}), and the
 * pipeline components the scenario starts. Closing it stops and deletes everything it started.
 */
public final class BenchCluster implements AutoCloseable {

  private final PrintStream log;
  private final long t0 = System.nanoTime();
  private final Path work;
  private final List<AutoCloseable> resources = new ArrayList<>();
  private final List<PipelineRuntime> runtimes = new ArrayList<>();
  private BrokerProcess broker;
  private String bootstrap;
  private String registryUrl;
  private String prefix;
  private TopicNames names;
  private ImTopics topics;
  private Admin admin;
  private Map<String, String> baseEnv;

  /** Stops what this run started and deletes its files when the JVM is ended early (Ctrl-C, SIGTERM). */
  private final Thread cleanupOnExit = new Thread(this::closeOnce, "bench-cleanup");
  private final AtomicBoolean closed = new AtomicBoolean();

  private BenchCluster(PrintStream log) throws IOException {
    this.log = log;
    this.work = Files.createTempDirectory("im-bench-");
    // A run ended early used to leave its state behind (up to 722 MB in /tmp per run).
    Runtime.getRuntime().addShutdownHook(cleanupOnExit);
  }

  /** Starts (or connects to) broker and registry and creates the topics. */
  public static BenchCluster start(BenchOptions options, PrintStream log) throws Exception {
    BenchCluster cluster = new BenchCluster(log);
    try {
      cluster.boot(options);
      return cluster;
    } catch (Exception | Error e) {
      cluster.close();
      throw e;
    }
  }

  private void boot(BenchOptions options) throws Exception {
    if (options.bootstrap().isPresent()) {
      bootstrap = options.bootstrap().get();
      step("using Kafka at " + bootstrap);
    } else {
      broker = BrokerProcess.start(work.resolve("broker.log"), System.getenv(BROKER_OPTS));
      bootstrap = broker.bootstrap();
      step("Kafka broker (embedded, KRaft, own JVM pid " + broker.pid() + ") at " + bootstrap);
    }
    if (options.registry().isPresent()) {
      registryUrl = options.registry().get();
      step("using schema registry at " + registryUrl);
    } else {
      EmbeddedSchemaRegistry registry = EmbeddedSchemaRegistry.start(0, Optional.empty(), work.resolve("registry"));
      resources.add(registry);
      registryUrl = registry.url();
      step("schema registry (Apicurio, own JVM) at " + registryUrl);
    }
    prefix = "bench-" + options.scenario() + "-"
        + DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS", Locale.ROOT).withZone(ZoneOffset.UTC)
            .format(java.time.Instant.now())
        + ".";
    names = TopicNames.withPrefix(prefix);
    Map<String, String> env = new HashMap<>();
    // The caller's IM_* / KAFKA_* settings apply (e.g. IM_ACK_TICK), except what places this run.
    System.getenv().forEach((k, v) -> {
      if (k.startsWith("IM_") || k.startsWith("KAFKA_")) {
        env.put(k, v);
      }
    });
    env.put(ImConfig.KAFKA_BOOTSTRAP_SERVERS, bootstrap);
    env.put(ImConfig.SCHEMA_REGISTRY_URL, registryUrl);
    env.put(ImConfig.IM_TOPIC_PREFIX, prefix);
    env.put(ImConfig.IM_HTTP_PORT, "0");
    env.put(ImConfig.IM_STATE_DIR, work.resolve("state").toString());
    Map<String, String> withAuth = new HashMap<>(env);
    if (AuthConfig.KEY_SOURCE_VARIABLES.stream().noneMatch(withAuth::containsKey)) {
      // The benchmarks run with authentication on, as production does: a fresh HS256 secret per run.
      byte[] secret = new byte[32];
      new java.security.SecureRandom().nextBytes(secret);
      withAuth.put(AuthConfig.IM_AUTH_HS256_SECRET, java.util.Base64.getEncoder().encodeToString(secret));
    }
    baseEnv = Map.copyOf(withAuth);
    ImConfig config = ImConfig.fromEnv(baseEnv);
    admin = Admin.create(config.clientProperties());
    resources.add(admin);
    List<String> created = new TopicProvisioner(admin, config.replicationFactor())
        .ensure(TopicCatalog.specs(names, config));
    topics = new ImTopics(names, SchemaRegistryClients.forUrl(registryUrl));
    step("topics ready (" + created.size() + " created, prefix '" + prefix + "')");
  }

  /** Extra JVM options of the benchmark's own broker (space-separated). */
  public static final String BROKER_OPTS = "IM_BENCH_BROKER_OPTS";

  /** Pid of the broker JVM, if this cluster started it. */
  public OptionalLong brokerPid() {
    return broker == null ? OptionalLong.empty() : OptionalLong.of(broker.pid());
  }

  public String bootstrap() {
    return bootstrap;
  }

  public String registryUrl() {
    return registryUrl;
  }

  public String prefix() {
    return prefix;
  }

  public TopicNames names() {
    return names;
  }

  public ImTopics topics() {
    return topics;
  }

  public Admin admin() {
    return admin;
  }

  /** Where the Streams apps keep their state. */
  public Path stateDir() {
    return work.resolve("state");
  }

  /** The environment the pipeline components see: broker, registry, prefix, state dir, plus {@code extra}. */
  public Map<String, String> env(Map<String, String> extra) {
    Map<String, String> env = new HashMap<>(baseEnv);
    env.putAll(extra);
    return env;
  }

  public ImConfig config() {
    return ImConfig.fromEnv(baseEnv).withEndpoints(bootstrap, registryUrl);
  }

  /** Mints bearer tokens the benchmark's runtimes accept. */
  public TokenIssuer tokens() {
    return AuthConfig.fromEnv(baseEnv).tokenIssuer().orElseThrow(() -> new IllegalStateException(
        "the benchmark needs an HS256 secret to mint tokens (IM_AUTH_HS256_SECRET)"));
  }

  /** Starts {@code components} in a pipeline runtime and waits until every Streams app is RUNNING. */
  public PipelineRuntime run(List<PipelineComponent> components, Map<String, String> extraEnv) throws Exception {
    PipelineRuntime runtime = startRuntime(components, extraEnv);
    await("Streams apps RUNNING", Duration.ofSeconds(120), runtime::healthy);
    step("running: " + String.join(", ", components.stream().map(PipelineComponent::name).toList()));
    return runtime;
  }

  /** Starts {@code components} in a pipeline runtime without waiting for them to be RUNNING. */
  public PipelineRuntime startRuntime(List<PipelineComponent> components, Map<String, String> extraEnv)
      throws Exception {
    Map<String, String> env = env(extraEnv);
    ImConfig config = ImConfig.fromEnv(env).withEndpoints(bootstrap, registryUrl);
    PipelineRuntime runtime = new PipelineRuntime(config, env, topics);
    runtimes.add(runtime);
    runtime.start(components);
    return runtime;
  }

  /** Stops a runtime started by {@link #run}. */
  public void stop(PipelineRuntime runtime) {
    runtime.close();
    runtimes.remove(runtime);
  }

  /** An idempotent {@code acks=all} producer of String keys, batching as a real client would under load. */
  public <V> KafkaProducer<String, V> producer(Serializer<V> valueSerializer) {
    return new KafkaProducer<>(loadProducerProperties(config().clientProperties()), new StringSerializer(),
        valueSerializer);
  }

  /** The load generators' producer settings on top of {@code clientProperties} (also used by a child JVM's). */
  public static Map<String, Object> loadProducerProperties(Map<String, Object> clientProperties) {
    Map<String, Object> props = new HashMap<>(clientProperties);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    props.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
    return props;
  }

  /** Creates a plain topic of the bench's own (ceiling, delay target). */
  public String createTopic(String suffix, int partitions) throws Exception {
    String name = prefix + suffix;
    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
    dev.impipe.runtime.topics.TopicProvisioner.awaitLeaders(admin, List.of(name), Duration.ofSeconds(60));
    return name;
  }

  public int partitions(String topic) throws Exception {
    return admin.describeTopics(List.of(topic)).allTopicNames().get(60, TimeUnit.SECONDS).get(topic)
        .partitions().size();
  }

  /** Records of {@code topics} the Streams app {@code appName} has not committed yet. */
  public long lag(String appName, Collection<String> topicNames) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(prefix + appName)
        .partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS);
    Map<TopicPartition, OffsetSpec> request = new HashMap<>();
    for (var d : admin.describeTopics(topicNames).allTopicNames().get(60, TimeUnit.SECONDS).values()) {
      d.partitions().forEach(p -> request.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest()));
    }
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends =
        admin.listOffsets(request).all().get(60, TimeUnit.SECONDS);
    long lag = 0;
    for (var e : ends.entrySet()) {
      OffsetAndMetadata c = committed.get(e.getKey());
      lag += Math.max(0, e.getValue().offset() - (c == null ? 0 : c.offset()));
    }
    return lag;
  }

  /** Sum of the end offsets of {@code topic}. */
  public long endOffsets(String topic) throws Exception {
    Map<TopicPartition, OffsetSpec> request = new HashMap<>();
    int n = partitions(topic);
    for (int p = 0; p < n; p++) {
      request.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    return admin.listOffsets(request).all().get(60, TimeUnit.SECONDS).values().stream()
        .mapToLong(ListOffsetsResult.ListOffsetsResultInfo::offset).sum();
  }

  /** Waits until {@code condition} holds, checking every 100 ms; fails after {@code timeout}. */
  public static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out after " + timeout.toSeconds() + " s waiting for: " + what);
      }
      TimeUnit.MILLISECONDS.sleep(100);
    }
  }

  /** The Streams app {@code appName} has consumed everything in {@code topicNames}. */
  public BooleanSupplier caughtUp(String appName, Set<String> topicNames) {
    return () -> {
      try {
        return lag(appName, topicNames) == 0;
      } catch (Exception e) {
        return false;
      }
    };
  }

  public void step(String message) {
    log.printf(Locale.ROOT, "[bench] %6.1fs  %s%n", (System.nanoTime() - t0) / 1e9, message);
    log.flush();
  }

  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(cleanupOnExit);
    } catch (IllegalStateException e) {
      // The JVM is already shutting down: the hook runs closeOnce too, and only one of them does the work.
    }
    closeOnce();
  }

  private void closeOnce() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (int i = runtimes.size() - 1; i >= 0; i--) {
      try {
        runtimes.get(i).close();
      } catch (RuntimeException e) {
        log.println("[bench] error stopping a runtime: " + e);
      }
    }
    runtimes.clear();
    for (int i = resources.size() - 1; i >= 0; i--) {
      try {
        resources.get(i).close();
      } catch (Exception e) {
        log.println("[bench] error stopping " + resources.get(i) + ": " + e);
      }
    }
    resources.clear();
    if (broker != null) {
      broker.stop();
      broker = null;
    }
    Dirs.deleteRecursively(work);
  }
}
