package dev.impipe.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.clients.CommonClientConfigs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ImConfigTest {

  @Test
  void emptyEnvironmentGivesTheDocumentedDefaults() {
    ImConfig config = ImConfig.fromEnv(Map.of());

    assertThat(config.bootstrapServers()).isEmpty();
    assertThat(config.schemaRegistryUrl()).isEmpty();
    assertThat(config.topicPrefix()).isEqualTo("im.");
    assertThat(config.httpPort()).isEqualTo(8080);
    assertThat(config.stateDir()).isEqualTo(Path.of(System.getProperty("java.io.tmpdir"), "im-streams"));
    assertThat(config.conversationPartitions()).isEqualTo(12);
    assertThat(config.userPartitions()).isEqualTo(24);
    assertThat(config.replicationFactor()).isEqualTo((short) 1);
    assertThat(config.kafkaOverrides()).isEmpty();
  }

  @Test
  void everyVariableIsRead() {
    ImConfig config = ImConfig.fromEnv(Map.of(
        "KAFKA_BOOTSTRAP_SERVERS", "broker-1:9092, broker-2:9093",
        "SCHEMA_REGISTRY_URL", "http://registry:8081/apis/ccompat/v7",
        "IM_TOPIC_PREFIX", "staging.im-",
        "IM_HTTP_PORT", "9000",
        "IM_STATE_DIR", "/var/lib/im",
        "IM_CONVERSATION_PARTITIONS", "6",
        "IM_USER_PARTITIONS", "48",
        "IM_REPLICATION_FACTOR", "3"));

    assertThat(config.bootstrapServers()).hasValue("broker-1:9092, broker-2:9093");
    assertThat(config.requireBootstrapServers()).isEqualTo("broker-1:9092, broker-2:9093");
    assertThat(config.schemaRegistryUrl()).hasValue("http://registry:8081/apis/ccompat/v7");
    assertThat(config.topicPrefix()).isEqualTo("staging.im-");
    assertThat(config.httpPort()).isEqualTo(9000);
    assertThat(config.stateDir()).isEqualTo(Path.of("/var/lib/im"));
    assertThat(config.conversationPartitions()).isEqualTo(6);
    assertThat(config.userPartitions()).isEqualTo(48);
    assertThat(config.replicationFactor()).isEqualTo((short) 3);
    assertThat(config.kafkaOverrides()).as("bootstrap servers are not an override").isEmpty();
  }

  @Test
  void blankOrPaddedValuesAreTrimmedOrTreatedAsUnset() {
    ImConfig config = ImConfig.fromEnv(Map.of(
        "IM_HTTP_PORT", " 8443 ",
        "IM_TOPIC_PREFIX", "  ",
        "KAFKA_BOOTSTRAP_SERVERS", "",
        "SCHEMA_REGISTRY_URL", " mock://unit "));

    assertThat(config.httpPort()).isEqualTo(8443);
    assertThat(config.topicPrefix()).isEqualTo("im.");
    assertThat(config.bootstrapServers()).isEmpty();
    assertThat(config.schemaRegistryUrl()).hasValue("mock://unit");
  }

  @Test
  void portZeroMeansAnyFreePort() {
    // Port 0 = pick a free port (tests, second instances).
    ImConfig config = ImConfig.fromEnv(Map.of("IM_HTTP_PORT", "0"));

    assertThat(config.httpPort()).isZero();
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(delimiter = '|', value = {
      "IM_HTTP_PORT               | http         | not a whole number",
      "IM_HTTP_PORT               | 65536        | out of range",
      "IM_HTTP_PORT               | -1           | out of range",
      "IM_HTTP_PORT               | 99999999999  | out of range",
      "IM_CONVERSATION_PARTITIONS | 0            | out of range",
      "IM_USER_PARTITIONS         | 2.5          | not a whole number",
      "IM_REPLICATION_FACTOR      | 0            | out of range",
      "IM_REPLICATION_FACTOR      | 33           | out of range",
      "IM_TOPIC_PREFIX            | im/          | letters, digits",
      "IM_TOPIC_PREFIX            | im prod.     | letters, digits",
      "KAFKA_BOOTSTRAP_SERVERS    | localhost    | host:port",
      "KAFKA_BOOTSTRAP_SERVERS    | :9092        | host:port",
      "KAFKA_BOOTSTRAP_SERVERS    | a:9092,b:x   | host:port",
      "SCHEMA_REGISTRY_URL        | registry:8081 | http(s)://",
      "SCHEMA_REGISTRY_URL        | ftp://r:21   | http(s)://",
  })
  void invalidValuesAreRejectedNamingTheVariable(String variable, String value, String explanation) {
    assertThatThrownBy(() -> ImConfig.fromEnv(Map.of(variable, value)))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageStartingWith(variable)
        .hasMessageContaining(value)
        .hasMessageContaining(explanation);
  }

  @Test
  void kafkaVariablesPassThroughAsClientProperties() {
    ImConfig config = ImConfig.fromEnv(Map.of(
        "KAFKA_BOOTSTRAP_SERVERS", "localhost:9092",
        "KAFKA_SASL_MECHANISM", "PLAIN",
        "KAFKA_SECURITY_PROTOCOL", "SASL_SSL",
        "KAFKA_SASL_JAAS_CONFIG", "org.apache.kafka.common.security.plain.PlainLoginModule required;"));

    assertThat(config.kafkaOverrides()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "sasl.mechanism", "PLAIN",
        "security.protocol", "SASL_SSL",
        "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required;"));
    assertThat(config.clientProperties())
        .containsEntry("bootstrap.servers", "localhost:9092")
        .containsEntry("sasl.mechanism", "PLAIN")
        .containsEntry(CommonClientConfigs.RECEIVE_BUFFER_CONFIG, -1)
        .hasSize(5);
  }

  @Test
  void kafkaScriptVariablesAreNotClientProperties() {
    ImConfig config = ImConfig.fromEnv(Map.of(
        "KAFKA_HEAP_OPTS", "-Xmx1g",
        "KAFKA_OPTS", "-Dfoo=bar",
        "KAFKA_JVM_PERFORMANCE_OPTS", "-server",
        "KAFKA_LOG4J_OPTS", "-Dlog4j.configuration=x",
        "KAFKA_JMX_OPTS", "-Dcom.sun.management.jmxremote",
        "KAFKA_HOME", "/opt/kafka",
        "KAFKA_ACKS", "all",
        "IM_UNRELATED", "x",
        "PATH", "/usr/bin"));

    assertThat(config.kafkaOverrides()).containsExactly(Map.entry("acks", "all"));
    assertThat(config.kafkaOverrides()).doesNotContainKeys("heap.opts", "opts", "home");
  }

  @Test
  void clientsUseTheOsSocketReceiveBufferUnlessTold() {
    assertThat(ImConfig.fromEnv(Map.of("KAFKA_BOOTSTRAP_SERVERS", "b:1")).clientProperties())
        .containsEntry("receive.buffer.bytes", -1);
    assertThat(ImConfig.fromEnv(Map.of("KAFKA_BOOTSTRAP_SERVERS", "b:1", "KAFKA_RECEIVE_BUFFER_BYTES", "65536"))
        .clientProperties()).containsEntry("receive.buffer.bytes", "65536");
    assertThat(ImConfig.fromEnv(Map.of("KAFKA_BOOTSTRAP_SERVERS", "b:1", "IM_FANOUT_KAFKA_RECEIVE_BUFFER_BYTES",
        "131072")).forComponent("fanout").clientProperties()).containsEntry("receive.buffer.bytes", "131072");
  }

  @Test
  void overridesCannotBeChangedAfterTheFact() {
    ImConfig config = ImConfig.fromEnv(Map.of("KAFKA_ACKS", "all"));

    assertThatThrownBy(() -> config.kafkaOverrides().put("acks", "0"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void requiringAnUnsetEndpointNamesTheVariable() {
    ImConfig config = ImConfig.fromEnv(Map.of());

    assertThatThrownBy(config::requireBootstrapServers)
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("KAFKA_BOOTSTRAP_SERVERS");
    assertThatThrownBy(config::clientProperties)
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("KAFKA_BOOTSTRAP_SERVERS");
    assertThatThrownBy(config::requireSchemaRegistryUrl)
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("SCHEMA_REGISTRY_URL");
  }

  @Test
  void localModeFillsInEndpointsAndTestsMovePortAndState() {
    ImConfig base = ImConfig.fromEnv(Map.of("IM_TOPIC_PREFIX", "t.", "KAFKA_ACKS", "all"));

    ImConfig local = base.withEndpoints("127.0.0.1:40001", "http://127.0.0.1:40002");
    ImConfig moved = local.withHttpPort(0, Path.of("/tmp/other"));

    assertThat(local.requireBootstrapServers()).isEqualTo("127.0.0.1:40001");
    assertThat(local.requireSchemaRegistryUrl()).isEqualTo("http://127.0.0.1:40002");
    assertThat(local.topicPrefix()).isEqualTo("t.");
    assertThat(local.kafkaOverrides()).containsEntry("acks", "all");
    assertThat(moved.httpPort()).isZero();
    assertThat(moved.stateDir()).isEqualTo(Path.of("/tmp/other"));
    assertThat(moved.requireBootstrapServers()).isEqualTo("127.0.0.1:40001");
    assertThat(base.bootstrapServers()).as("the original is unchanged").isEmpty();
  }

  @Test
  void aComponentsOwnKafkaVariablesReplaceTheSharedOnesForItsClientsOnly() {
    ImConfig config = ImConfig.fromEnv(Map.of(
        "KAFKA_BOOTSTRAP_SERVERS", "localhost:9092",
        "KAFKA_SECURITY_PROTOCOL", "SASL_SSL",
        "KAFKA_SASL_JAAS_CONFIG", "shared;",
        "IM_INBOX_STORE_KAFKA_SASL_JAAS_CONFIG", " inbox-store; ",
        "IM_INBOX_STORE_KAFKA_CLIENT_ID", "sync",
        "IM_FANOUT_KAFKA_SASL_JAAS_CONFIG", "fanout;",
        "IM_DELAY_KAFKA_ACKS", "",
        "IM_DELAY_TICK", "1s"));

    assertThat(config.kafkaOverrides()).containsOnly(Map.entry("security.protocol", "SASL_SSL"),
        Map.entry("sasl.jaas.config", "shared;"));
    assertThat(config.componentKafkaOverrides()).containsOnlyKeys("INBOX_STORE", "FANOUT");
    assertThat(config.forComponent("inbox-store").clientProperties()).containsOnly(
        Map.entry("bootstrap.servers", "localhost:9092"), Map.entry("security.protocol", "SASL_SSL"),
        Map.entry("sasl.jaas.config", "inbox-store;"), Map.entry("client.id", "sync"),
        Map.entry(CommonClientConfigs.RECEIVE_BUFFER_CONFIG, -1));
    assertThat(config.forComponent("fanout").clientProperties()).containsEntry("sasl.jaas.config", "fanout;");
    // No variables of its own: the shared settings, the same config.
    assertThat(config.forComponent("delay")).isSameAs(config);
    assertThat(config.forComponent("delay").clientProperties()).containsEntry("sasl.jaas.config", "shared;");
    // Copies keep the per-component settings.
    assertThat(config.withEndpoints("b:1", "http://r").forComponent("fanout").clientProperties())
        .containsEntry("sasl.jaas.config", "fanout;").containsEntry("bootstrap.servers", "b:1");
    assertThat(config.withHttpPort(1, Path.of("s")).componentKafkaOverrides()).containsOnlyKeys("INBOX_STORE",
        "FANOUT");
  }

  @Test
  void componentKeysAreNamesUpperCasedWithUnderscores() {
    assertThat(ImConfig.componentKey("inbox-store")).isEqualTo("INBOX_STORE");
    assertThat(ImConfig.componentKey("push-gateway")).isEqualTo("PUSH_GATEWAY");
    assertThat(ImConfig.componentKey("fanout")).isEqualTo("FANOUT");
    assertThat(ImConfig.componentKey("a.b")).isEqualTo("A_B");
  }

  @Test
  void aComponentCannotHaveBootstrapServersOfItsOwn() {
    assertThatThrownBy(() -> ImConfig.fromEnv(Map.of("IM_FANOUT_KAFKA_BOOTSTRAP_SERVERS", "x:1")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_FANOUT_KAFKA_BOOTSTRAP_SERVERS")
        .hasMessageContaining("KAFKA_BOOTSTRAP_SERVERS");
  }

  @Test
  void variablesThatOnlyLookAlikeAreNoComponentsKafkaSettings() {
    ImConfig config = ImConfig.fromEnv(Map.of("IM_KAFKA_SECURITY", "scram", "IM_FANOUT_KAFKA_", "x",
        "IM__KAFKA_ACKS", "1", "IM_fanout_KAFKA_ACKS", "1"));
    assertThat(config.componentKafkaOverrides()).isEmpty();
    assertThat(config.kafkaOverrides()).isEmpty();
  }
}
