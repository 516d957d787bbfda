package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.security.ScramPrincipals;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalKafkaSecurityTest {

  @TempDir
  Path root;

  @Test
  void offByDefaultAndForNone() throws Exception {
    assertThat(LocalKafkaSecurity.configure(Map.of(), root)).isEmpty();
    assertThat(LocalKafkaSecurity.configure(Map.of("IM_KAFKA_SECURITY", " NONE "), root)).isEmpty();
    assertThat(LocalKafkaSecurity.configure(Map.of("IM_KAFKA_SECURITY", ""), root)).isEmpty();
    assertThat(root).isEmptyDirectory();
  }

  @Test
  void aBadValueOrAnExistingClusterIsRefusedWithTheVariable() {
    assertThatThrownBy(() -> LocalKafkaSecurity.configure(Map.of("IM_KAFKA_SECURITY", "mtls"), root))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_KAFKA_SECURITY='mtls'")
        .hasMessageContaining("none or scram");
    assertThatThrownBy(() -> LocalKafkaSecurity.configure(Map.of("IM_KAFKA_SECURITY", "scram",
        "KAFKA_BOOTSTRAP_SERVERS", "b:9092"), root))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_<COMPONENT>_KAFKA_");
  }

  @Test
  void scramGivesEveryComponentItsOwnLoginAndTheLauncherTheSharedOne() throws Exception {
    LocalKafkaSecurity security = LocalKafkaSecurity.configure(Map.of("IM_KAFKA_SECURITY", "scram"), root)
        .orElseThrow();
    Map<String, String> env = security.clientEnv();
    assertThat(env).containsEntry("KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT")
        .containsEntry("KAFKA_SASL_MECHANISM", "SCRAM-SHA-512")
        .containsKeys("IM_INGEST_KAFKA_SASL_JAAS_CONFIG", "IM_FANOUT_KAFKA_SASL_JAAS_CONFIG",
            "IM_INBOX_STORE_KAFKA_SASL_JAAS_CONFIG", "IM_ACK_TIMEOUT_KAFKA_SASL_JAAS_CONFIG",
            "IM_DELAY_KAFKA_SASL_JAAS_CONFIG", "IM_PUSH_GATEWAY_KAFKA_SASL_JAAS_CONFIG",
            "IM_NOTIFY_KAFKA_SASL_JAAS_CONFIG")
        .hasSize(10);
    assertThat(env.get("KAFKA_SASL_JAAS_CONFIG")).contains("username=\"im-launcher\"");
    // Through ImConfig, each component's clients log in as that component.
    ImConfig config = ImConfig.fromEnv(env).withEndpoints("127.0.0.1:1", "http://127.0.0.1:2");
    assertThat(config.forComponent("inbox-store").clientProperties().get("sasl.jaas.config").toString())
        .contains("username=\"im-inbox-store\"");
    assertThat(config.forComponent("push-gateway").clientProperties().get("sasl.jaas.config").toString())
        .contains("username=\"im-push-gateway\"");
    assertThat(security.adminClientProperties("127.0.0.1:1")).containsEntry("bootstrap.servers", "127.0.0.1:1")
        .containsEntry("sasl.jaas.config", ScramPrincipals.jaasConfig("im-admin", security.broker().adminPassword()));
    assertThat(security.describe()).contains("SCRAM-SHA-512", "StandardAuthorizer", "im-fanout")
        .doesNotContain(security.broker().adminPassword());
  }

  @Test
  void passwordsAreKeptOwnerOnlyAndReusedOnRestart() throws Exception {
    Map<String, String> env = Map.of("IM_KAFKA_SECURITY", "scram");
    LocalKafkaSecurity first = LocalKafkaSecurity.configure(env, root).orElseThrow();
    LocalKafkaSecurity again = LocalKafkaSecurity.configure(env, root).orElseThrow();
    assertThat(again.clientEnv()).isEqualTo(first.clientEnv());
    assertThat(again.broker()).isEqualTo(first.broker());
    for (String file : new String[] {LocalKafkaSecurity.USERS_FILE, LocalKafkaSecurity.ADMIN_FILE}) {
      assertThat(Files.getPosixFilePermissions(root.resolve(file))).extracting(Object::toString)
          .containsExactlyInAnyOrder("OWNER_READ", "OWNER_WRITE");
    }
    // Another data dir, other passwords.
    Path other = Files.createDirectory(root.resolve("other"));
    assertThat(LocalKafkaSecurity.configure(env, other).map(LocalKafkaSecurity::clientEnv))
        .isNotEqualTo(Optional.of(first.clientEnv()));
  }

  @Test
  void produceAndTailLogInWithTheKafkaPassthrough() throws Exception {
    LocalKafkaSecurity security = LocalKafkaSecurity.configure(Map.of("IM_KAFKA_SECURITY", "scram"), root)
        .orElseThrow();
    Map<String, String> env = new java.util.HashMap<>(Map.of("KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT",
        "KAFKA_SASL_MECHANISM", "SCRAM-SHA-512", "KAFKA_BOOTSTRAP_SERVERS", "elsewhere:1", "KAFKA_HEAP_OPTS", "-Xmx1g",
        "IM_FANOUT_KAFKA_ACKS", "1"));
    env.put("KAFKA_SASL_JAAS_CONFIG", security.adminClientProperties("x:1").get("sasl.jaas.config").toString());
    assertThat(ProduceCommand.clientProperties(env, "127.0.0.1:9092")).containsOnly(
        Map.entry("bootstrap.servers", "127.0.0.1:9092"), Map.entry("security.protocol", "SASL_PLAINTEXT"),
        Map.entry("sasl.mechanism", "SCRAM-SHA-512"), Map.entry("sasl.jaas.config", env.get("KAFKA_SASL_JAAS_CONFIG")));
    assertThat(ProduceCommand.clientProperties(Map.of(), "b:1")).containsOnly(Map.entry("bootstrap.servers", "b:1"));
  }
}
