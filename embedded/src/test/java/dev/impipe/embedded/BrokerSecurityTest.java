package dev.impipe.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.security.ScramPrincipals;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BrokerSecurityTest {

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
