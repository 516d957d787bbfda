package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.avro.Notification;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link WebPushProvider} sends, received by an independent implementation: Node's {@code http_ece} decrypts it
 * with the subscription's private key and auth secret, {@code jose} verifies the VAPID JWT for the endpoint's origin
 * (the libraries the acceptance check's push service uses). Skipped when {@code node}/{@code npm} are missing or the
 * npm registry cannot be reached.
 */
class WebPushInteropIT {

  private static final Path WORK = Path.of("target", "webpush-interop");
  private static String node;

  @TempDir
  Path dir;

  @BeforeAll
  static void install() throws Exception {
    node = onPath("node");
    String npm = onPath("npm");
    Assumptions.assumeTrue(node != null && npm != null, "node/npm not on the PATH: install Node 20+ to run this test");
    Files.createDirectories(WORK);
    for (String file : List.of("package.json", "receive.mjs")) {
      try (InputStream in = WebPushInteropIT.class.getResourceAsStream("/webpush-interop/" + file)) {
        Files.write(WORK.resolve(file), in.readAllBytes());
      }
    }
    if (!Files.isDirectory(WORK.resolve("node_modules/http_ece"))
        || !Files.isDirectory(WORK.resolve("node_modules/jose"))) {
      Process p = new ProcessBuilder(npm, "install", "--no-audit", "--no-fund").directory(WORK.toFile())
          .redirectErrorStream(true).redirectOutput(WORK.resolve("npm-install.log").toFile()).start();
      boolean done = p.waitFor(5, TimeUnit.MINUTES);
      if (!done) {
        p.destroyForcibly();
      }
      Assumptions.assumeTrue(done && p.exitValue() == 0, () -> "npm install failed (registry unreachable?): "
          + read(WORK.resolve("npm-install.log")));
    }
  }

  @Test
  void http_eceDecryptsThePayloadAndJoseAcceptsTheVapidJwt() throws Exception {
    // Given a subscription (a user agent's P-256 key pair and auth secret) and a push service recording the request
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(EcKeys.P256);
    var ua = g.generateKeyPair();
    byte[] auth = new byte[16];
    new SecureRandom().nextBytes(auth);
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    VapidKeys vapid = VapidKeys.generate(dir.resolve("vapid.pem"));
    try (LocalHttpServer push = new LocalHttpServer(r -> LocalHttpServer.Answer.of(201))) {
      Notification n = Notification.newBuilder(TestNotifications.webPush(push.url() + "/push/s1"))
          .setPreview("Grüße, \"watermelon\" \uD83C\uDF49").setP256dh(b64.encodeToString(EcKeys.uncompressed(
              (ECPublicKey) ua.getPublic())))
          .setAuth(b64.encodeToString(auth)).build();
      byte[] payload = NotificationPayload.bytes(n);

      // When the provider sends the notification
      SendOutcome outcome = new WebPushProvider(HttpClient.newHttpClient(), vapid, "mailto:ops@example.com",
          Duration.ofSeconds(5), Clock.systemUTC()).send(n, payload).get(30, TimeUnit.SECONDS);
      assertThat(outcome).isEqualTo(new SendOutcome.Delivered(201));
      LocalHttpServer.Request request = push.requests().get(0);
      Path body = dir.resolve("body.bin");
      Files.write(body, request.body());

      // Then Node's http_ece decrypts exactly the payload, and jose verifies the JWT for the push service's origin
      JsonNode result = receive(scalar((ECPrivateKey) ua.getPrivate()), b64.encodeToString(auth), body,
          request.header("Authorization"), push.url());
      assertThat(result.path("decryptError").isMissingNode()).as(result.toString()).isTrue();
      assertThat(result.path("plaintext").asText()).isEqualTo(new String(payload, StandardCharsets.UTF_8));
      JsonNode v = result.path("vapid");
      assertThat(v.path("ok").asBoolean()).as(v.toString()).isTrue();
      assertThat(v.path("alg").asText()).isEqualTo("ES256");
      assertThat(v.path("sub").asText()).isEqualTo("mailto:ops@example.com");
      assertThat(v.path("aud").asText()).isEqualTo(push.url());
      assertThat(v.path("expIn").asDouble()).isBetween(0.0, 24 * 3600.0);
    }
  }

  private static JsonNode receive(String uaPrivate, String auth, Path body, String authorization, String audience)
      throws Exception {
    Process p = new ProcessBuilder(node, "receive.mjs", uaPrivate, auth, body.toAbsolutePath().toString(),
        authorization, audience).directory(WORK.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return new ObjectMapper().readTree(out);
  }

  private static String scalar(ECPrivateKey key) {
    byte[] raw = key.getS().toByteArray();
    byte[] fixed = new byte[32];
    int len = Math.min(raw.length, 32);
    System.arraycopy(raw, raw.length - len, fixed, 32 - len, len);
    assertThat(new BigInteger(1, fixed)).isEqualTo(key.getS());
    return Base64.getUrlEncoder().withoutPadding().encodeToString(fixed);
  }

  private static String onPath(String name) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path candidate = Path.of(d, name);
      if (Files.isExecutable(candidate)) {
        return candidate.toString();
      }
    }
    return null;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      return e.toString();
    }
  }
}
