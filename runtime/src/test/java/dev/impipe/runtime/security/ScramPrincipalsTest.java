package dev.impipe.runtime.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

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
}
