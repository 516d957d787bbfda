package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.edge.auth.AuthConfig;
import dev.impipe.edge.auth.Principal;
import dev.impipe.edge.auth.TestTokens;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bin/im token}: what it prints is what the runtime accepts. */
class TokenCommandTest {

  @TempDir
  Path dir;
  private Path secretFile;
  /** No local instance: the endpoints file points into the temp dir and does not exist. */
  private Map<String, String> noLocal;

  @BeforeEach
  void setUp() throws Exception {
    secretFile = dir.resolve("hs256.secret");
    Files.writeString(secretFile, TestTokens.SECRET_BASE64 + "\n");
    noLocal = Map.of(Endpoints.IM_LOCAL_ENDPOINTS_FILE, dir.resolve("local.properties").toString());
  }

  @Test
  void printsOnlyATokenThatTheVerifierAccepts() throws Exception {
    // Given the secret file in the environment
    Map<String, String> env = with(noLocal, AuthConfig.IM_AUTH_HS256_SECRET_FILE, secretFile.toString());

    // When a token is asked for alice on her phone for 2 hours
    String printed = run(env, "alice", "--device", "phone", "--ttl", "2h");

    // Then stdout is one line, the token, and the runtime's verifier accepts it
    assertThat(printed).endsWith(System.lineSeparator()).doesNotContain(" ");
    assertThat(printed.strip().lines()).hasSize(1);
    Principal principal = AuthConfig.fromEnv(env).verifier().verify(printed.strip());
    assertThat(principal.userId()).isEqualTo("alice");
    assertThat(principal.deviceId()).hasValue("phone");
    assertThat(principal.expiresAt()).isBetween(Instant.now().plus(Duration.ofMinutes(119)),
        Instant.now().plus(Duration.ofMinutes(121)));
  }

  @Test
  void theDefaultLifetimeIsAnHourAndIssuerAndAudienceComeFromTheEnvironment() throws Exception {
    Map<String, String> env = new HashMap<>(noLocal);
    env.put(AuthConfig.IM_AUTH_HS256_SECRET, TestTokens.SECRET_BASE64);
    env.put(AuthConfig.IM_AUTH_ISSUER, "im-local");
    env.put(AuthConfig.IM_AUTH_AUDIENCE, "im-api");

    Principal principal = AuthConfig.fromEnv(env).verifier().verify(run(env, "probe").strip());

    assertThat(principal.userId()).isEqualTo("probe");
    assertThat(principal.deviceId()).isEmpty();
    assertThat(principal.expiresAt()).isBetween(Instant.now().plus(Duration.ofMinutes(59)),
        Instant.now().plus(Duration.ofMinutes(61)));
  }

  @Test
  void findsTheSecretOfTheRunningLocalInstance() throws Exception {
    // Given a running bin/im local (this process stands in for it) that recorded its secret file
    new Endpoints("127.0.0.1:9092", "http://127.0.0.1:8081", "http://127.0.0.1:18080",
        ProcessHandle.current().pid(), Optional.of(secretFile)).write(noLocal);

    // When bin/im token probe runs in another shell without any IM_AUTH_* variable
    String token = run(noLocal, "probe").strip();

    // Then the token verifies with the local instance's secret
    Map<String, String> runtimeEnv = Map.of(AuthConfig.IM_AUTH_HS256_SECRET_FILE, secretFile.toString());
    assertThat(AuthConfig.fromEnv(runtimeEnv).verifier().verify(token).userId()).isEqualTo("probe");
  }

  @Test
  void theEnvironmentWinsOverTheLocalInstance() throws Exception {
    Path localSecret = LocalAuth.ensureSecret(dir.resolve("local-data/auth"));
    new Endpoints("b:1", "http://r", "http://h", ProcessHandle.current().pid(), Optional.of(localSecret))
        .write(noLocal);
    Map<String, String> env = with(noLocal, AuthConfig.IM_AUTH_HS256_SECRET, TestTokens.SECRET_BASE64);

    String token = run(env, "alice").strip();

    assertThat(TestTokens.verifier().verify(token).userId()).isEqualTo("alice");
    assertThatThrownBy(() -> AuthConfig.fromEnv(Map.of(AuthConfig.IM_AUTH_HS256_SECRET_FILE, localSecret.toString()))
        .verifier().verify(token)).hasMessage("bad signature");
  }

  @Test
  void withoutALocalInstanceOrASecretItSaysWhatToDo() {
    assertThat(fail(noLocal, "alice"))
        .contains("im token: no secret to sign with")
        .contains("bin/im local")
        .contains("IM_AUTH_HS256_SECRET");
  }

  @Test
  void aLocalInstanceThatKeepsNoSecretFileIsNamed() {
    new Endpoints("b:1", "http://r", "http://h", ProcessHandle.current().pid()).write(noLocal);
    assertThat(fail(noLocal, "alice")).contains("keeps no token secret in a file");
  }

  @Test
  void aStaleEndpointsFileIsIgnored() throws Exception {
    // A local instance that is gone (its process has exited) does not count
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor();
    new Endpoints("b:1", "http://r", "http://h", gone.pid(), Optional.of(secretFile)).write(noLocal);
    assertThat(fail(noLocal, "alice")).contains("no secret to sign with");
  }

  @Test
  void badArgumentsAreClearErrors() {
    Map<String, String> env = with(noLocal, AuthConfig.IM_AUTH_HS256_SECRET_FILE, secretFile.toString());
    assertThat(fail(env)).contains("im token: Missing required parameter: 'USER'")
        .contains("Usage: bin/im token [-hV] [--device=D] [--ttl=DURATION] USER");
    assertThat(fail(noLocal, "a:b")).as("checked before looking for a secret").contains("invalid user id 'a:b'");
    assertThat(fail(env, "alice", "--device", "my phone")).contains("invalid device id 'my phone'");
    assertThat(fail(env, "alice", "--ttl", "soon")).contains("--ttl='soon' is not a duration");
    assertThat(fail(env, "alice", "--ttl", "31d")).contains("out of range").contains("30d");
    assertThat(fail(env, "alice", "--ttl")).contains("Missing required parameter for option '--ttl' (DURATION)");
    assertThat(fail(env, "alice", "bob")).contains("im token: Unmatched argument at index 2: 'bob'");
    assertThat(fail(env, "alice", "--dev", "phone")).contains("im token: Unknown options: '--dev', 'phone'");
  }

  @Test
  void mainListsTheCommandAndReportsUsageErrorsWithStatus2() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertThat(Main.run(new String[] {"--help"}, new PrintStream(out, true, StandardCharsets.UTF_8), System.err))
        .isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("  token ").contains("print a bearer token");
    assertThat(Main.run(new String[] {"token"}, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8))).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("im token: Missing required parameter: 'USER'");
  }

  /** {@code bin/im token args}: status 0; returns stdout. */
  private static String run(Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertThat(Main.run(token(args), env, InputStream.nullInputStream(), new PrintStream(out, true,
        StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)))
        .as("%s", err.toString(StandardCharsets.UTF_8)).isZero();
    return out.toString(StandardCharsets.UTF_8);
  }

  /** {@code bin/im token args}: a usage error, status 2, nothing on stdout; returns stderr. */
  private static String fail(Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertThat(Main.run(token(args), env, InputStream.nullInputStream(), new PrintStream(out, true,
        StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8))).isEqualTo(2);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    return err.toString(StandardCharsets.UTF_8);
  }

  private static String[] token(String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "token";
    System.arraycopy(args, 0, all, 1, args.length);
    return all;
  }

  private static Map<String, String> with(Map<String, String> env, String name, String value) {
    Map<String, String> m = new HashMap<>(env);
    m.put(name, value);
    return m;
  }
}
