package dev.impipe.runtime.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.resource.PatternType;
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

  @Test
  void aGrownDeploymentKeepsGenerationZerosGrantsAndAddsItsGenerations() {
    // Given the inbox store's principal
    Set<String> users = Set.of("im-inbox-store");

    // When provisioned at generation 0 and at generation 1
    List<AclBinding> g0 = ScramPrincipals.bindings("im.", 0, users);
    List<AclBinding> g1 = ScramPrincipals.bindings("im.", 1, users);

    // Then generation 1 grants everything generation 0 did plus the suffixed topics and application id
    assertThat(g1).containsAll(g0).doesNotHaveDuplicates();
    assertThat(resources(g0)).doesNotContain("im.inbox.g1", "im.inbox-store.g1");
    assertThat(resources(g1)).contains("im.inbox", "im.inbox.g1", "im.device-cursors.g1", "im.inbox-store.g1",
        "im.inbox-store.g1-");
  }

  private static List<String> resources(List<AclBinding> acls) {
    return acls.stream().filter(a -> a.pattern().patternType() != PatternType.ANY).map(a -> a.pattern().name())
        .toList();
  }
}
