package dev.impipe.edge.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RoutePatternsTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({"/v1/users/{userId}/inbox, /v1/users/:userId/inbox", "v1/x/{a}/y/{b_2}, /v1/x/:a/y/:b_2",
      "//health, /health", "/, /"})
  void bracedVariablesBecomeTheRoutersColonVariables(String pattern, String forRouter) {
    assertThat(RoutePatterns.forRouter(pattern)).isEqualTo(forRouter);
  }

  @Test
  void theCanonicalPatternHasOneLeadingSlashAndKeepsItsBraces() {
    assertThat(RoutePatterns.canonical("v1/users/{userId}")).isEqualTo("/v1/users/{userId}");
    assertThat(RoutePatterns.canonical("///metrics")).isEqualTo("/metrics");
  }

  @Test
  void aVariableThatIsNotAPlainNameIsRefusedAtRegistration() {
    assertThatThrownBy(() -> RoutePatterns.forRouter("/v1/{user-id}")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RoutePatterns.forRouter("/v1/{}")).isInstanceOf(IllegalArgumentException.class);
  }
}
