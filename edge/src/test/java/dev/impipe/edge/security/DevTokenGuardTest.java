package dev.impipe.edge.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.edge.auth.AuthConfig;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DevTokenGuardTest {

  private static DevTokenGuard guard(Map<String, String> env, String bind) {
    return DevTokenGuard.forBind(AuthConfig.TABLE.read(env), bind);
  }

  @Test
  void devTokensOnANonLoopbackBindAddressAreRefusedUnlessExplicitlyAllowed() {
    assertThatThrownBy(() -> guard(Map.of(), "0.0.0.0")).isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("IM_AUTH_DEV_TOKENS_ANY_INTERFACE");
    assertThatThrownBy(() -> guard(Map.of(), "192.168.1.5")).isInstanceOf(InvalidConfigException.class);
    assertThatCode(() -> guard(Map.of(), "127.0.0.1")).doesNotThrowAnyException();
    assertThatCode(() -> guard(Map.of(), "localhost")).doesNotThrowAnyException();
    assertThatCode(() -> guard(Map.of("IM_AUTH_DEV_TOKENS_ANY_INTERFACE", "true"), "0.0.0.0"))
        .doesNotThrowAnyException();
  }

  @ParameterizedTest(name = "Host {0}, Origin {1} -> {2}")
  @CsvSource(nullValues = "null", value = {
      "127.0.0.1:8080, null, true", "localhost:8080, http://localhost:8080, true", "[::1]:8080, null, true",
      "localhost, http://127.0.0.1:3000, true",
      // DNS rebinding: the attacker's name now resolves to 127.0.0.1, the browser still sends that name
      "rebind.evil.com:8080, http://rebind.evil.com:8080, false",
      "127.0.0.1:8080, http://evil.com, false", "127.0.0.1:8080, null, true", "null, null, false",
      "127.evil.com:8080, null, false", "localhost:8080, file:///tmp/x.html, false",
      "dev.box:8080, http://dev.box:8080, true"})
  void onlyLoopbackOrConfiguredHostsAndOriginsGetDevTokens(String host, String origin, boolean allowed) {
    DevTokenGuard guard = guard(Map.of("IM_AUTH_DEV_TOKENS_HOSTS", "dev.box"), "127.0.0.1");
    Map<String, String> headers = new HashMap<>();
    if (host != null) {
      headers.put("host", host);
    }
    if (origin != null) {
      headers.put("origin", origin);
    }
    Request request = new Request("POST", "/dev/token", Map.of(), Map.of(), headers, new byte[0]);
    if (allowed) {
      assertThatCode(() -> guard.check(request)).doesNotThrowAnyException();
    } else {
      assertThatThrownBy(() -> guard.check(request)).isInstanceOf(HttpError.class)
          .satisfies(e -> assertThat(((HttpError) e).status()).isEqualTo(403));
    }
  }
}
