package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.edge.auth.AuthConfig;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.InvalidConfigException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Local mode's own token secret: generated once, owner-only, reused across restarts. */
class LocalAuthTest {

  @TempDir
  Path root;

  @Test
  void withoutAKeySourceLocalModeGeneratesAPrivateSecretAndEnablesDevTokens() throws Exception {
    // Given no IM_AUTH_* variable
    Map<String, String> env = new HashMap<>(Map.of("IM_HTTP_PORT", "0"));

    // When local mode configures auth
    LocalAuth.Setup setup = LocalAuth.configure(env, root);

    // Then a 256-bit secret sits in <data dir>/auth/hs256.secret, readable by its owner only
    Path file = root.resolve("auth").resolve("hs256.secret").toAbsolutePath();
    assertThat(setup.generated()).isTrue();
    assertThat(setup.secretFile()).hasValue(file);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent()))).isEqualTo("rwx------");
    assertThat(Base64.getDecoder().decode(Files.readString(file).strip())).hasSize(32);
    // and the runtime is told where it is, with the dev-token endpoint on
    assertThat(env).containsEntry(AuthConfig.IM_AUTH_HS256_SECRET_FILE, file.toString())
        .containsEntry(AuthConfig.IM_AUTH_DEV_TOKENS, "true");
    assertThat(setup.config().devTokens()).isTrue();
    assertThat(setup.describe()).isEqualTo("auth: HS256 tokens (bin/im token USER), secret " + file);
  }

  @Test
  void aRestartOnTheSameDataDirReusesTheSecretSoTokensStayValid() throws Exception {
    // Given a first run that minted a token
    LocalAuth.Setup first = LocalAuth.configure(new HashMap<>(), root);
    String token = first.config().tokenIssuer().orElseThrow().issue("alice", Optional.empty(), Duration.ofHours(1));
    String secret = Files.readString(first.secretFile().orElseThrow());

    // When local mode starts again on the same data dir
    LocalAuth.Setup second = LocalAuth.configure(new HashMap<>(), root);

    // Then the secret is the same and the old token still verifies
    assertThat(Files.readString(second.secretFile().orElseThrow())).isEqualTo(secret);
    assertThat(second.config().verifier().verify(token).userId()).isEqualTo("alice");
  }

  @Test
  void anotherDataDirGetsAnotherSecret(@TempDir Path other) throws Exception {
    Path a = LocalAuth.ensureSecret(root.resolve("auth"));
    Path b = LocalAuth.ensureSecret(other.resolve("auth"));
    assertThat(Files.readString(a)).isNotEqualTo(Files.readString(b));
  }

  @Test
  void aReusedSecretFileIsTightenedToOwnerOnly() throws Exception {
    Path file = LocalAuth.ensureSecret(root.resolve("auth"));
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));

    LocalAuth.ensureSecret(root.resolve("auth"));

    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
  }

  @Test
  void aKeySourceTheUserConfiguredIsUsedAsIs() {
    Map<String, String> env = new HashMap<>(TestTokens.env());

    LocalAuth.Setup setup = LocalAuth.configure(env, root);

    assertThat(setup.generated()).isFalse();
    assertThat(setup.secretFile()).isEmpty();
    assertThat(env).isEqualTo(TestTokens.env());
    assertThat(root.resolve("auth")).doesNotExist();
    assertThat(setup.describe()).isEqualTo("auth: HS256 secret (bin/im token USER)");
  }

  @Test
  void devTokensCanBeTurnedOffInLocalMode() {
    Map<String, String> env = new HashMap<>(Map.of(AuthConfig.IM_AUTH_DEV_TOKENS, "false"));
    assertThat(LocalAuth.configure(env, root).config().devTokens()).isFalse();
  }

  @Test
  void aBadAuthVariableStopsLocalModeNamingIt() {
    Map<String, String> env = new HashMap<>(Map.of(AuthConfig.IM_AUTH_JWKS_URL, "http://idp.example/jwks"));
    assertThatThrownBy(() -> LocalAuth.configure(env, root)).isInstanceOf(InvalidConfigException.class)
        .hasMessageStartingWith(AuthConfig.IM_AUTH_JWKS_URL);
  }

  @Test
  void localModeStopsOnABadAuthVariableBeforeStartingAnything() {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    Map<String, String> env = Map.of(AuthConfig.IM_AUTH_HS256_SECRET, "c2hvcnQ=",
        Endpoints.IM_LOCAL_ENDPOINTS_FILE, root.resolve("local.properties").toString());

    assertThatThrownBy(() -> LocalLauncher.start(env, Optional.of(root.resolve("data")),
        new PrintStream(log, true, StandardCharsets.UTF_8)))
        .isInstanceOf(InvalidConfigException.class).hasMessageStartingWith(AuthConfig.IM_AUTH_HS256_SECRET);
    assertThat(log.toString(StandardCharsets.UTF_8)).doesNotContain("broker");
    assertThat(root.resolve("data").resolve("kafka")).doesNotExist();
  }

  @Test
  void theEndpointsFileRecordsTheSecretFile() {
    Map<String, String> env = Map.of(Endpoints.IM_LOCAL_ENDPOINTS_FILE, root.resolve("local.properties").toString());
    Path secret = LocalAuth.ensureSecret(root.resolve("auth"));
    new Endpoints("b:1", "http://r", "http://h", ProcessHandle.current().pid(), Optional.of(secret)).write(env);

    assertThat(Endpoints.readFile(env).orElseThrow().authSecretFile()).hasValue(secret);
  }
}
