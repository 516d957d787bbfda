package dev.impipe.edge.app;

import dev.impipe.edge.auth.AuthConfig;
import dev.impipe.edge.auth.TokenVerifier;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.HttpSettings;
import dev.impipe.edge.http.Response;
import dev.impipe.edge.security.DevTokenGuard;
import dev.impipe.runtime.app.SharedRocksDBMemory;
import dev.impipe.runtime.app.StreamThreadReplacement;
import dev.impipe.runtime.app.StreamsDefaults;
import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.RegistrySettings;
import dev.impipe.runtime.config.Setting;
import dev.impipe.runtime.streams.MemtableBudget;
import dev.impipe.runtime.streams.WriteBackStore;
import dev.impipe.runtime.topics.ImTopics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs pipeline components in one process: the HTTP API with {@code /health} and {@code /metrics}, their Kafka
 * Streams apps, and an orderly shutdown.
 */
public final class PipelineRuntime implements ComponentContext, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PipelineRuntime.class);
  /** Standby replicas of every Streams app's state (default 0). */
  public static final String IM_STANDBY_REPLICAS = "IM_STANDBY_REPLICAS";
  public static final String IM_ADVERTISED_HOST = "IM_ADVERTISED_HOST";

  public static final Setting<String> ADVERTISED_HOST = Setting.optional(IM_ADVERTISED_HOST,
      "host other instances use to reach this one (interactive queries)").defaultDoc("`IM_HTTP_HOST`");
  public static final Setting<Integer> STANDBY_REPLICAS = Setting.integer(IM_STANDBY_REPLICAS, 0, 0, 16,
      "Kafka Streams standby replicas of every app's state (see Running in production)")
      .defaultDoc("`0` (`bin/im local --instances N>1`: `1`)");

  public static final Setting<Integer> THREAD_REPLACEMENTS = StreamThreadReplacement.REPLACEMENTS;
  public static final Setting<Duration> THREAD_REPLACEMENT_WINDOW = StreamThreadReplacement.WINDOW;

  /** Settings of the process that runs the components, besides the pipeline's, the HTTP server's and auth's. */
  public static final ConfigTable TABLE = ConfigTable.of("runtime", ADVERTISED_HOST, STANDBY_REPLICAS,
      THREAD_REPLACEMENTS, THREAD_REPLACEMENT_WINDOW, SharedRocksDBMemory.MEMORY).alsoReading(HttpSettings.HOST);

  private final ImConfig config;
  private final Map<String, String> env;
  private final ImTopics topics;
  private final PrometheusMeterRegistry metrics;
  private final HttpApi http;
  private final InstanceHealth health = new InstanceHealth();
  private final Deque<AutoCloseable> closeables = new ArrayDeque<>();
  private final String advertisedHost;
  private final ConfigValues runtimeConfig;

  /**
   * A runtime whose {@code /v1} routes require bearer tokens verified as {@link AuthConfig} reads them from
   * {@code env} (a configuration without a key source is refused: there is no unauthenticated mode).
   */
  public PipelineRuntime(ImConfig config, Map<String, String> env, ImTopics topics) throws java.io.IOException {
    this(config, env, topics, AuthConfig.fromEnv(env), devTokenGuard(env));
  }

  private PipelineRuntime(ImConfig config, Map<String, String> env, ImTopics topics, AuthConfig auth,
      DevTokenGuard devTokens) throws java.io.IOException {
    this(config, env, topics, auth.verifier(), auth.hs256Secret().map(AuthConfig.Secret::bytes).orElse(null));
    if (devTokens != null) {
      http.guard("/dev/", devTokens::check);
    }
    LOG.info("Authentication: {}", auth.describe());
    LOG.info("Config of {}", AuthConfig.TABLE.read(env).describe());
  }

  /** The dev-token guard when dev tokens are on (refused on a non-loopback bind address, see DevTokenGuard). */
  private static DevTokenGuard devTokenGuard(Map<String, String> env) {
    if (!AuthConfig.DEV_TOKENS.read(env)) {
      return null;
    }
    return DevTokenGuard.forBind(AuthConfig.TABLE.read(env), HttpSettings.HOST.read(env));
  }

  /**
   * @param verifier verifies the bearer tokens every {@code /v1} route requires (null: the routes are open, for
   *     tests of the runtime itself only); closed with the runtime when it is {@link AutoCloseable}
   * @param sharedSecret a secret every instance shares, from which the forwarding key is derived unless
   *     {@code IM_CLUSTER_KEY} is set (null: none)
   */
  public PipelineRuntime(ImConfig config, Map<String, String> env, ImTopics topics, TokenVerifier verifier,
      byte[] sharedSecret) throws java.io.IOException {
    this.config = config;
    this.env = Map.copyOf(env);
    this.topics = topics;
    this.metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(metrics);
    new JvmGcMetrics().bindTo(metrics);
    new JvmThreadMetrics().bindTo(metrics);
    new ClassLoaderMetrics().bindTo(metrics);
    new ProcessorMetrics().bindTo(metrics);
    new UptimeMetrics().bindTo(metrics);
    this.runtimeConfig = TABLE.read(env);
    LOG.info("Config of {}", config.describe());
    LOG.info("Config of {}", HttpSettings.TABLE.read(env).describe());
    LOG.info("Config of {}", runtimeConfig.describe());
    LOG.info("Config of {}", RegistrySettings.TABLE.read(env).describe());
    String host = runtimeConfig.get(HttpSettings.HOST);
    this.advertisedHost = runtimeConfig.optional(ADVERTISED_HOST)
        .orElse(host.equals("0.0.0.0") ? "127.0.0.1" : host);
    HttpSettings settings = HttpSettings.fromEnv(env, config.httpPort());
    if (sharedSecret != null && HttpSettings.CLUSTER_KEY.read(env) == null) {
      settings = settings.withClusterKey(derive(sharedSecret, "im-cluster-forwarding-key"));
    }
    this.http = new HttpApi(settings);
    if (verifier != null) {
      http.authenticate("/v1/", verifier);
      if (verifier instanceof AutoCloseable closeable) {
        closeOnShutdown(closeable);
      }
    }
    http.probe("GET", "/health", r -> health.response());
    http.probe("GET", "/health/live", r -> Response.json(200, Map.of("status", "ALIVE")));
    http.system("GET", "/metrics", r -> Response.text(200, "text/plain; version=0.0.4; charset=utf-8",
        metrics.scrape()));
    io.micrometer.core.instrument.Gauge.builder("im.http.queued", http, HttpApi::queued)
        .description("HTTP requests waiting for a worker").register(metrics);
    io.micrometer.core.instrument.Gauge.builder("im.http.connections", http, HttpApi::openConnections)
        .description("open HTTP connections").register(metrics);
  }

  private static byte[] derive(byte[] secret, String purpose) {
    try {
      javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
      mac.init(new javax.crypto.spec.SecretKeySpec(secret, "HmacSHA256"));
      return mac.doFinal(purpose.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }

  /** Starts the HTTP server, then every component in order. */
  public void start(List<? extends dev.impipe.runtime.app.PipelineComponent> components) throws Exception {
    http.routesPending(); // until every component has added its routes: 503 + Retry-After, not 404
    http.start();
    for (dev.impipe.runtime.app.PipelineComponent component : components.stream()
        .sorted(java.util.Comparator.comparingInt(dev.impipe.runtime.app.PipelineComponent::order)).toList()) {
      long t0 = System.nanoTime();
      for (ConfigTable table : component.configTables()) {
        LOG.info("Config of {}", table.read(env).describe());
      }
      component.start(new ScopedContext(this, config.forComponent(component.name())));
      LOG.info("Component {} started in {} ms", component.name(), (System.nanoTime() - t0) / 1_000_000);
    }
    http.routesComplete();
    health.started();
  }

  /** Whether an app in {@code state} lets the instance be ready (see {@link InstanceHealth#response}). */
  static boolean ready(KafkaStreams.State state, boolean hasRun) {
    return InstanceHealth.ready(state, hasRun);
  }

  /** True once every component has started and every Streams app is RUNNING. */
  public boolean healthy() {
    return health.healthy();
  }

  @Override
  public void readiness(String name, java.util.function.BooleanSupplier ready) {
    health.readiness(name, ready);
  }

  @Override
  public KafkaStreams startStreams(String name, Topology topology, Map<String, Object> overrides) {
    return startStreams(name, topology, overrides, config);
  }

  /** Starts app {@code name} with the Kafka client settings of {@code clientConfig} (a component's principal). */
  KafkaStreams startStreams(String name, Topology topology, Map<String, Object> overrides, ImConfig clientConfig) {
    Properties props = streamsProperties(name, overrides, clientConfig);
    LOG.info("Topology of {}:\n{}", props.get(StreamsConfig.APPLICATION_ID_CONFIG), topology.describe());
    KafkaStreams app = new KafkaStreams(topology, props);
    health.follow(name, app);
    app.setUncaughtExceptionHandler(StreamThreadReplacement.fromEnv(name, env));
    KafkaStreamsMetrics binder = new KafkaStreamsMetrics(app);
    binder.bindTo(metrics);
    String applicationId = props.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
    closeOnShutdown(() -> {
      // A clean stop leaves every store complete: the last commit writes what write-back stores hold in memory.
      WriteBackStore.closing(applicationId);
      try {
        // Leave the group on a clean stop, so a restart (or another instance) takes the partitions over at once
        // instead of after the session timeout.
        app.close(org.apache.kafka.streams.CloseOptions
            .groupMembershipOperation(org.apache.kafka.streams.CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
            .withTimeout(Duration.ofSeconds(30)));
      } finally {
        WriteBackStore.closed(applicationId);
      }
      binder.close();
    });
    app.start();
    return app;
  }

  /** The Streams properties every app of the pipeline starts from. */
  public Properties streamsProperties(String name, Map<String, Object> overrides) {
    return streamsProperties(name, overrides, config);
  }

  /** As {@link #streamsProperties(String, Map)} with the Kafka client settings of {@code clientConfig}. */
  Properties streamsProperties(String name, Map<String, Object> overrides, ImConfig clientConfig) {
    Properties props = new Properties();
    props.putAll(clientConfig.clientProperties());
    props.putAll(StreamsDefaults.properties(config, topics.names(), name));
    props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, applicationServer());
    // Warm copies of the state on other instances: a crashed instance's tasks resume from a standby instead of
    // replaying their changelogs (README "Running in production" has the measured hand-over times).
    props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG,
        runtimeConfig.get(STANDBY_REPLICAS));
    long rocksDbMemory = runtimeConfig.get(SharedRocksDBMemory.MEMORY);
    if (rocksDbMemory > 0) {
      // Half for the block cache shared by every store, half for the memtables of the budgeted stores.
      props.put(SharedRocksDBMemory.CONFIG_BYTES, Long.toString(rocksDbMemory / 2));
      props.put(MemtableBudget.CONFIG_BYTES, Long.toString(rocksDbMemory - rocksDbMemory / 2));
    } else {
      props.remove(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG);
    }
    props.putAll(overrides);
    return props;
  }

  @Override
  public String applicationServer() {
    return advertisedHost + ":" + http.port();
  }

  @Override
  public ImConfig config() {
    return config;
  }

  @Override
  public Map<String, String> env() {
    return env;
  }

  @Override
  public ImTopics topics() {
    return topics;
  }

  @Override
  public MeterRegistry metrics() {
    return metrics;
  }

  @Override
  public HttpApi http() {
    return http;
  }

  /** The running Streams apps by name. */
  public Map<String, KafkaStreams> streams() {
    return health.streams();
  }

  @Override
  public java.util.Optional<KafkaStreams> streams(String name) {
    return java.util.Optional.ofNullable(health.streams().get(name));
  }

  @Override
  public synchronized <T extends AutoCloseable> T closeOnShutdown(T resource) {
    closeables.push(resource);
    return resource;
  }

  @Override
  public synchronized void close() {
    http.close();
    while (!closeables.isEmpty()) {
      AutoCloseable c = closeables.pop();
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("Error while closing {}", c, e);
      }
    }
    metrics.close();
  }
}
