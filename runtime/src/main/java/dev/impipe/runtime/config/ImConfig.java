package dev.impipe.runtime.config;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * Settings shared by every part of the pipeline, built from the environment by {@link #fromEnv(Map)}, a
 * pure function (tests pass a map). Module-specific settings live in each module's own config.
 *
 * @param bootstrapServers Kafka bootstrap servers; empty means "start the embedded broker" in local mode
 * @param schemaRegistryUrl registry base URL; empty means "start the embedded registry" in local mode
 * @param topicPrefix prefix of every topic name and application id (default {@code im.})
 * @param httpPort port of the HTTP API
 * @param stateDir Kafka Streams state directory root
 * @param conversationPartitions partitions of conversation-keyed topics
 * @param userPartitions partitions of user-keyed topics
 * @param replicationFactor replication factor of created topics
 * @param kafkaOverrides client properties from {@code KAFKA_*} variables (e.g. KAFKA_SASL_MECHANISM)
 * @param componentKafkaOverrides per component key ({@link #componentKey}), client properties from
 *     {@code IM_<COMPONENT>_KAFKA_*} variables that replace or add to {@code kafkaOverrides} for the Kafka clients of
 *     that component only (e.g. {@code IM_INBOX_STORE_KAFKA_SASL_JAAS_CONFIG}: the inbox-store's own principal)
 */
public record ImConfig(
    Optional<String> bootstrapServers,
    Optional<String> schemaRegistryUrl,
    String topicPrefix,
    int httpPort,
    Path stateDir,
    int conversationPartitions,
    int userPartitions,
    short replicationFactor,
    Map<String, String> kafkaOverrides,
    Map<String, Map<String, String>> componentKafkaOverrides) {

  public static final String KAFKA_BOOTSTRAP_SERVERS = "KAFKA_BOOTSTRAP_SERVERS";
  public static final String SCHEMA_REGISTRY_URL = "SCHEMA_REGISTRY_URL";
  public static final String IM_TOPIC_PREFIX = "IM_TOPIC_PREFIX";
  public static final String IM_HTTP_PORT = "IM_HTTP_PORT";
  public static final String IM_STATE_DIR = "IM_STATE_DIR";
  public static final String IM_CONVERSATION_PARTITIONS = "IM_CONVERSATION_PARTITIONS";
  public static final String IM_USER_PARTITIONS = "IM_USER_PARTITIONS";
  public static final String IM_REPLICATION_FACTOR = "IM_REPLICATION_FACTOR";
  public static final String IM_INBOX_GENERATION = "IM_INBOX_GENERATION";

  public static final Setting<String> BOOTSTRAP = Setting.optional(KAFKA_BOOTSTRAP_SERVERS, "Kafka to use")
      .validate(ImConfig::isHostPortList, "host:port[,host:port...]")
      .defaultDoc("(local mode: embedded broker)");
  public static final Setting<String> REGISTRY = Setting.optional(SCHEMA_REGISTRY_URL,
      "Confluent-compatible registry base URL (Apicurio: `http://host:port/apis/ccompat/v7`)")
      .validate(r -> r.matches("(?i)(https?|mock)://\\S+"), "an http(s):// URL (or mock://scope in tests)")
      .defaultDoc("(local mode: embedded registry)");
  public static final Setting<String> KAFKA_CLIENT_PROPERTIES = Setting.documented("KAFKA_*", "",
      "passed to every Kafka client: `KAFKA_SASL_MECHANISM=PLAIN` -> `sasl.mechanism=PLAIN`; `receive.buffer.bytes` "
          + "is `-1` (the OS's socket buffer, autotuned) unless set");
  public static final Setting<String> TOPIC_PREFIX = Setting.string(IM_TOPIC_PREFIX, "im.",
      "prefix of topic names and Streams application ids")
      .validate(p -> p.matches("[A-Za-z0-9._-]{0,100}"), "letters, digits, '.', '_' or '-' (at most 100)");
  public static final Setting<Integer> HTTP_PORT = Setting.integer(IM_HTTP_PORT, 8080, 0, 65535,
      "HTTP API port (local mode picks a free one if 8080 is taken and this is unset)");
  public static final Setting<Path> STATE_DIR = Setting.parsed(IM_STATE_DIR, "path",
      Path.of(System.getProperty("java.io.tmpdir"), "im-streams"), Path::of, "Kafka Streams state")
      .defaultDoc("`$TMPDIR/im-streams` (local mode: `<data dir>/streams`)");
  public static final Setting<Integer> CONVERSATION_PARTITIONS = Setting.integer(IM_CONVERSATION_PARTITIONS, 12, 1,
      10_000, "partitions of conversation-keyed topics (on creation)");
  public static final Setting<Integer> USER_PARTITIONS = Setting.integer(IM_USER_PARTITIONS, 24, 1, 10_000,
      "partitions of user-keyed topics (on creation)");
  public static final Setting<Integer> REPLICATION_FACTOR = Setting.integer(IM_REPLICATION_FACTOR, 1, 1, 32,
      "replication factor of created topics and Streams internal topics");
  public static final Setting<Integer> INBOX_GENERATION = Setting.integer(IM_INBOX_GENERATION, 0, 0, 10_000,
      "the inbox generation every process reads and writes: 0 = `im.inbox`, `im.device-cursors`, ...; g >= 1 = "
          + "`im.inbox.g<g>`, ... (set after `bin/im inbox grow`, docs/operations/growing-the-inbox.md)");

  /** The settings every process reads; {@code KAFKA_*} client properties are matched by name, not declared. */
  public static final ConfigTable TABLE = ConfigTable.of("pipeline", BOOTSTRAP, REGISTRY, KAFKA_CLIENT_PROPERTIES,
      TOPIC_PREFIX, HTTP_PORT, STATE_DIR, CONVERSATION_PARTITIONS, USER_PARTITIONS, REPLICATION_FACTOR,
      INBOX_GENERATION);

  /** Variables of Kafka's own scripts, not client properties. */
  private static final Set<String> NOT_CLIENT_PROPERTIES = Set.of(
      KAFKA_BOOTSTRAP_SERVERS, "KAFKA_HEAP_OPTS", "KAFKA_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS",
      "KAFKA_LOG4J_OPTS", "KAFKA_JMX_OPTS", "KAFKA_GC_LOG_OPTS", "KAFKA_DEBUG", "KAFKA_HOME");

  /** {@code IM_<COMPONENT>_KAFKA_<PROPERTY>}: COMPONENT is the name upper-cased, '-' as '_' (INBOX_STORE). */
  private static final java.util.regex.Pattern COMPONENT_KAFKA =
      java.util.regex.Pattern.compile("IM_([A-Z0-9_]+?)_KAFKA_([A-Z0-9_]+)");

  public ImConfig {
    kafkaOverrides = Map.copyOf(kafkaOverrides);
    Map<String, Map<String, String>> copy = new TreeMap<>();
    componentKafkaOverrides.forEach((k, v) -> copy.put(k, Map.copyOf(v)));
    componentKafkaOverrides = java.util.Collections.unmodifiableMap(copy);
  }

  /** A config without per-component Kafka settings (as most tests build one). */
  public ImConfig(Optional<String> bootstrapServers, Optional<String> schemaRegistryUrl, String topicPrefix,
      int httpPort, Path stateDir, int conversationPartitions, int userPartitions, short replicationFactor,
      Map<String, String> kafkaOverrides) {
    this(bootstrapServers, schemaRegistryUrl, topicPrefix, httpPort, stateDir, conversationPartitions,
        userPartitions, replicationFactor, kafkaOverrides, Map.of());
  }

  /** The key of a component's {@code IM_<COMPONENT>_KAFKA_*} variables: {@code inbox-store} -> {@code INBOX_STORE}. */
  public static String componentKey(String component) {
    return component.toUpperCase(Locale.ROOT).replace('-', '_').replace('.', '_');
  }

  /** The Kafka client property a variable's suffix names: {@code SASL_JAAS_CONFIG} -> {@code sasl.jaas.config}. */
  static String propertyName(String suffix) {
    return suffix.toLowerCase(Locale.ROOT).replace('_', '.');
  }

  /** Builds the config from environment variables; throws {@link InvalidConfigException} naming the variable. */
  public static ImConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    Optional<String> bootstrap = values.optional(BOOTSTRAP);
    Optional<String> registry = values.optional(REGISTRY);
    String prefix = values.get(TOPIC_PREFIX);
    int port = values.get(HTTP_PORT);
    Path stateDir = values.get(STATE_DIR);
    int conversationPartitions = values.get(CONVERSATION_PARTITIONS);
    int userPartitions = values.get(USER_PARTITIONS);
    short replication = (short) (int) values.get(REPLICATION_FACTOR);

    Map<String, String> overrides = new TreeMap<>();
    Map<String, Map<String, String>> byComponent = new TreeMap<>();
    environment.forEach((name, value) -> {
      if (value == null || value.isBlank()) {
        return;
      }
      if (name.startsWith("KAFKA_") && !NOT_CLIENT_PROPERTIES.contains(name)) {
        overrides.put(propertyName(name.substring("KAFKA_".length())), value.trim());
        return;
      }
      java.util.regex.Matcher m = COMPONENT_KAFKA.matcher(name);
      if (m.matches()) {
        if (m.group(2).equals("BOOTSTRAP_SERVERS")) {
          throw new InvalidConfigException(name + " is not supported: every component uses "
              + KAFKA_BOOTSTRAP_SERVERS);
        }
        byComponent.computeIfAbsent(m.group(1), k -> new TreeMap<>()).put(propertyName(m.group(2)), value.trim());
      }
    });
    return new ImConfig(bootstrap, registry, prefix, port, stateDir, conversationPartitions, userPartitions,
        replication, overrides, byComponent);
  }

  private static boolean isHostPortList(String servers) {
    for (String hostPort : servers.split(",")) {
      String hp = hostPort.trim();
      int colon = hp.lastIndexOf(':');
      if (colon <= 0 || !hp.substring(colon + 1).matches("\\d{1,5}")) {
        return false;
      }
    }
    return true;
  }

  /** The bootstrap servers, which must be known by now (after local mode started its broker). */
  public String requireBootstrapServers() {
    return bootstrapServers.orElseThrow(() -> new InvalidConfigException(KAFKA_BOOTSTRAP_SERVERS + " is not set"));
  }

  /** The registry URL, which must be known by now. */
  public String requireSchemaRegistryUrl() {
    return schemaRegistryUrl.orElseThrow(() -> new InvalidConfigException(SCHEMA_REGISTRY_URL + " is not set"));
  }

  /** A copy pointing at the given broker and registry (local mode fills these in after starting them). */
  public ImConfig withEndpoints(String bootstrap, String registryUrl) {
    return new ImConfig(Optional.of(bootstrap), Optional.of(registryUrl), topicPrefix, httpPort, stateDir,
        conversationPartitions, userPartitions, replicationFactor, kafkaOverrides, componentKafkaOverrides);
  }

  /** A copy with another HTTP port and state dir (tests, second instances). */
  public ImConfig withHttpPort(int port, Path state) {
    return new ImConfig(bootstrapServers, schemaRegistryUrl, topicPrefix, port, state,
        conversationPartitions, userPartitions, replicationFactor, kafkaOverrides, componentKafkaOverrides);
  }

  /**
   * The config as {@code component} sees it: its {@code IM_<COMPONENT>_KAFKA_*} settings laid over the shared
   * {@code KAFKA_*} ones, so {@link #clientProperties()} log in as the component's own principal.
   */
  public ImConfig forComponent(String component) {
    Map<String, String> own = componentKafkaOverrides.get(componentKey(component));
    if (own == null) {
      return this;
    }
    Map<String, String> merged = new TreeMap<>(kafkaOverrides);
    merged.putAll(own);
    return new ImConfig(bootstrapServers, schemaRegistryUrl, topicPrefix, httpPort, stateDir,
        conversationPartitions, userPartitions, replicationFactor, merged, componentKafkaOverrides);
  }

  /**
   * One line for the start-up log in the form of {@link ConfigValues#describe()}: the values in use (local mode fills
   * in the endpoints), and of the {@code KAFKA_*} client properties only their names (they may hold credentials).
   */
  public String describe() {
    Map<Setting<?>, Object> values = new java.util.LinkedHashMap<>();
    values.put(BOOTSTRAP, bootstrapServers.orElse(null));
    values.put(REGISTRY, schemaRegistryUrl.orElse(null));
    values.put(KAFKA_CLIENT_PROPERTIES, kafkaOverrides.keySet());
    values.put(TOPIC_PREFIX, topicPrefix);
    values.put(HTTP_PORT, httpPort);
    values.put(STATE_DIR, stateDir);
    values.put(CONVERSATION_PARTITIONS, conversationPartitions);
    values.put(USER_PARTITIONS, userPartitions);
    values.put(REPLICATION_FACTOR, replicationFactor);
    return new ConfigValues(TABLE.name(), values).describe();
  }

  /** Properties every Kafka client of the pipeline starts from. */
  public Map<String, Object> clientProperties() {
    Map<String, Object> props = new TreeMap<>();
    // The OS's socket receive buffer, which grows with the traffic (TCP autotuning), instead of the clients' fixed
    // 32 KB (producers) and 64 KB (consumers): a read_committed consumer of im.inbox at ~135k entries/s with 64 KB
    // fell 150-330 ms behind in single seconds while a second one beside it with a large buffer did not
    // (docs/adr/0007-os-tuned-socket-buffers.md). KAFKA_RECEIVE_BUFFER_BYTES overrides it.
    props.put(CommonClientConfigs.RECEIVE_BUFFER_CONFIG, -1);
    props.putAll(kafkaOverrides);
    props.put("bootstrap.servers", requireBootstrapServers());
    return props;
  }
}
