package dev.impipe.runtime.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.embedded.BrokerSecurity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScramPrincipalsTest {

  @Test
  void jaasConfigIsAScramLoginWithQuotesEscaped() {
    assertThat(ScramPrincipals.jaasConfig("im-fanout", "p\"w\\d")).isEqualTo(
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"im-fanout\" "
            + "password=\"p\\\"w\\\\d\";");
    assertThat(ScramPrincipals.clientProperties("SASL_SSL", "u", "p")).containsExactly(
        Map.entry("security.protocol", "SASL_SSL"), Map.entry("sasl.mechanism", "SCRAM-SHA-512"),
        Map.entry("sasl.jaas.config", ScramPrincipals.jaasConfig("u", "p")));
  }

  @Test
  void passwordsAreRandomHex() {
    String a = ScramPrincipals.newPassword();
    assertThat(a).matches("[0-9a-f]{32}").isNotEqualTo(ScramPrincipals.newPassword());
  }

  @Test
  void brokerSecurityUsesScramForClientsAndBrokersPlainForControllersAndTheStandardAuthorizer() {
    BrokerSecurity security = new BrokerSecurity("admin", "secret");
    Map<String, String> p = security.brokerProperties(9092, 9093);
    assertThat(p).containsEntry("listeners", "SASL_PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093")
        .containsEntry("advertised.listeners", "SASL_PLAINTEXT://127.0.0.1:9092")
        .containsEntry("sasl.enabled.mechanisms", "SCRAM-SHA-512")
        .containsEntry("sasl.mechanism.controller.protocol", "PLAIN")
        .containsEntry("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
        .containsEntry("super.users", "User:admin")
        .containsEntry("allow.everyone.if.no.acl.found", "false");
    assertThat(p.get("listener.name.controller.plain.sasl.jaas.config")).contains("user_admin=\"secret\"");
    assertThat(security.adminClientProperties()).containsEntry("sasl.jaas.config",
        ScramPrincipals.jaasConfig("admin", "secret")).containsEntry("security.protocol", "SASL_PLAINTEXT");
    assertThat(BrokerSecurity.clientProperties("im-delay", "x")).containsEntry("sasl.mechanism", "SCRAM-SHA-512");
    assertThat(security.toString()).doesNotContain("secret");
    assertThatThrownBy(() -> new BrokerSecurity("a,b", "x")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new BrokerSecurity("a", "x]")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new BrokerSecurity(" ", "x")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theAdminPasswordIsKeptInAFileOnlyItsOwnerReads(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("sub").resolve("kafka-admin.password");
    BrokerSecurity first = BrokerSecurity.fromFile(file);
    assertThat(BrokerSecurity.fromFile(file)).isEqualTo(first);
    assertThat(first.adminUser()).isEqualTo(BrokerSecurity.DEFAULT_ADMIN);
    assertThat(Files.getPosixFilePermissions(file)).extracting(Object::toString)
        .containsExactlyInAnyOrder("OWNER_READ", "OWNER_WRITE");
    assertThat(BrokerSecurity.generate().adminPassword()).isNotEqualTo(first.adminPassword());
  }
}
