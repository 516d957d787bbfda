package dev.impipe.edge.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.InvalidConfigException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AuthConfigTest {

  private static final String SECRET = TestTokens.SECRET_BASE64;

  @Test
  void aSecretAloneGivesTheDocumentedDefaults() {
    AuthConfig config = AuthConfig.fromEnv(Map.of("IM_AUTH_HS256_SECRET", SECRET));

    assertThat(config.hs256Secret()).isPresent();
    assertThat(config.hs256Secret().get().base64()).isEqualTo(SECRET);
    assertThat(config.jwksUrl()).isEmpty();
    assertThat(config.issuer()).isEmpty();
    assertThat(config.audience()).isEmpty();
    assertThat(config.clockSkew()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.jwksRefresh()).isEqualTo(Duration.ofMinutes(5));
    assertThat(config.devTokens()).isFalse();
  }

  @Test
  void everyVariableIsRead(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("hs256.secret");
    Files.writeString(file, SECRET + "\n");
    AuthConfig config = AuthConfig.fromEnv(Map.of(
        "IM_AUTH_JWKS_URL", "https://id.example/realms/im/protocol/openid-connect/certs",
        "IM_AUTH_HS256_SECRET_FILE", file.toString(),
        "IM_AUTH_ISSUER", "https://id.example/realms/im",
        "IM_AUTH_AUDIENCE", "im-api",
        "IM_AUTH_CLOCK_SKEW", "5s",
        "IM_AUTH_JWKS_REFRESH", "15m",
        "IM_AUTH_DEV_TOKENS", "true"));

    assertThat(config.jwksUrl()).hasValue(URI.create("https://id.example/realms/im/protocol/openid-connect/certs"));
    assertThat(config.hs256Secret().orElseThrow().base64()).isEqualTo(SECRET);
    assertThat(config.issuer()).hasValue("https://id.example/realms/im");
    assertThat(config.audience()).hasValue("im-api");
    assertThat(config.clockSkew()).isEqualTo(Duration.ofSeconds(5));
    assertThat(config.jwksRefresh()).isEqualTo(Duration.ofMinutes(15));
    assertThat(config.devTokens()).isTrue();
  }

  @Test
  void aJwksUrlAloneIsEnoughAndMintsNothing() {
    AuthConfig config = AuthConfig.fromEnv(Map.of("IM_AUTH_JWKS_URL", "https://id.example/jwks"));
    assertThat(config.hs256Secret()).isEmpty();
    assertThat(config.tokenIssuer()).isEmpty();
  }

  @Test
  void withoutAnyKeySourceTheErrorSaysHowToConfigureOne() {
    assertThatThrownBy(() -> AuthConfig.fromEnv(Map.of("IM_AUTH_ISSUER", "x", "IM_AUTH_HS256_SECRET", "  ")))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("IM_AUTH_JWKS_URL")
        .hasMessageContaining("IM_AUTH_HS256_SECRET")
        .hasMessageContaining("openssl rand -base64 32");
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(delimiter = '|', value = {
      "IM_AUTH_HS256_SECRET|c2hvcnQ=|too short",
      "IM_AUTH_HS256_SECRET|not base64 at all!|not base64",
      "IM_AUTH_JWKS_URL|id.example/jwks|expected an https:// URL",
      "IM_AUTH_JWKS_URL|ftp://id.example/jwks|expected an https:// URL",
      "IM_AUTH_JWKS_URL|http://id.example/jwks|must use https",
      "IM_AUTH_CLOCK_SKEW|soon|not a duration",
      "IM_AUTH_CLOCK_SKEW|1h|out of range",
      "IM_AUTH_JWKS_REFRESH|1s|out of range",
      "IM_AUTH_DEV_TOKENS|maybe|expected true or false",
  })
  void invalidValuesNameTheVariable(String name, String value, String expected) {
    Map<String, String> env = new java.util.HashMap<>(Map.of("IM_AUTH_HS256_SECRET", SECRET));
    env.put(name, value);
    assertThatThrownBy(() -> AuthConfig.fromEnv(env))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageStartingWith(name)
        .hasMessageContaining(expected)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain(SECRET));
  }

  @Test
  void aSecretFileThatCannotBeReadOrIsTooShortNamesTheVariable(@TempDir Path dir) throws Exception {
    assertThatThrownBy(() -> AuthConfig.fromEnv(Map.of("IM_AUTH_HS256_SECRET_FILE", dir.resolve("nope").toString())))
        .isInstanceOf(InvalidConfigException.class).hasMessageStartingWith("IM_AUTH_HS256_SECRET_FILE")
        .hasMessageContaining("cannot be read");
    Path shortFile = dir.resolve("short");
    Files.writeString(shortFile, Base64.getEncoder().encodeToString(new byte[16]));
    assertThatThrownBy(() -> AuthConfig.fromEnv(Map.of("IM_AUTH_HS256_SECRET_FILE", shortFile.toString())))
        .isInstanceOf(InvalidConfigException.class).hasMessageStartingWith("IM_AUTH_HS256_SECRET_FILE")
        .hasMessageContaining("too short");
  }

  @Test
  void aSecretGivenTwoWaysIsRefused(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("s");
    Files.writeString(file, SECRET);
    assertThatThrownBy(() -> AuthConfig.fromEnv(Map.of("IM_AUTH_HS256_SECRET", SECRET,
        "IM_AUTH_HS256_SECRET_FILE", file.toString())))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("both set");
  }

  @Test
  void urlSafeBase64AndLoopbackHttpAreAccepted() {
    byte[] key = new byte[32];
    key[0] = (byte) 0xfb; // encodes to '-' / '_' in the URL-safe alphabet
    key[1] = (byte) 0xff;
    String urlSafe = Base64.getUrlEncoder().withoutPadding().encodeToString(key);
    AuthConfig config = AuthConfig.fromEnv(Map.of("IM_AUTH_HS256_SECRET", urlSafe,
        "IM_AUTH_JWKS_URL", "http://127.0.0.1:9999/jwks"));
    assertThat(config.hs256Secret().orElseThrow().bytes()).isEqualTo(key);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"http://127.evil.com/jwks", "http://127.0.0.1.evil.com/jwks", "http://localhost.evil.com/jwks",
      "http://10.0.0.1/jwks", "http://999.0.0.1/jwks"})
  void plainHttpJwksOnAHostThatOnlyLooksLikeLoopbackIsRefused(String url) {
    // Given a JWKS over plain http on a DNS name (or a non-loopback address) that starts like a loopback one
    // Then the configuration is refused: only a real loopback host may serve keys without TLS
    assertThatThrownBy(() -> AuthConfig.fromEnv(Map.of("IM_AUTH_HS256_SECRET", SECRET, "IM_AUTH_JWKS_URL", url)))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("https");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"http://127.0.0.1:9999/jwks", "http://127.1.2.3/jwks", "http://localhost:1/jwks",
      "http://[::1]:8/jwks", "https://idp.example.com/jwks"})
  void plainHttpJwksOnARealLoopbackHostIsAccepted(String url) {
    assertThat(AuthConfig.fromEnv(Map.of("IM_AUTH_HS256_SECRET", SECRET, "IM_AUTH_JWKS_URL", url)).jwksUrl())
        .contains(URI.create(url));
  }

  @Test
  void theSecretIsNeverPrinted() {
    AuthConfig config = AuthConfig.fromEnv(Map.of("IM_AUTH_HS256_SECRET", SECRET, "IM_AUTH_ISSUER", "me"));
    assertThat(config.toString()).doesNotContain(SECRET).contains("HS256 secret", "iss me");
    assertThat(config.describe()).doesNotContain(SECRET);
  }
}
