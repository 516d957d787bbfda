package dev.impipe.edge.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.edge.auth.AuthConfig;
import dev.impipe.edge.http.HttpSettings;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EdgeConfigTablesTest {

  @Test
  void theTokenSecretAndTheClusterKeyAreMaskedInTheirTablesLogLines() {
    String secret = Base64.getEncoder().encodeToString("0123456789abcdef0123456789abcdef".getBytes());
    Map<String, String> env = Map.of(AuthConfig.IM_AUTH_HS256_SECRET, secret, HttpSettings.IM_CLUSTER_KEY, secret);

    String auth = AuthConfig.TABLE.read(env).describe();
    String http = HttpSettings.TABLE.read(env).describe();

    assertThat(auth).contains("IM_AUTH_HS256_SECRET=****").doesNotContain(secret);
    assertThat(http).contains("IM_CLUSTER_KEY=****").doesNotContain(secret);
  }
}
