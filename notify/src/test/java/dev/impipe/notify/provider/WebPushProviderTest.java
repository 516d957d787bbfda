package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.Notification;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WebPushProviderTest {

  static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  @TempDir
  Path dir;

  @Test
  void aGeneratedKeyFileIsPrivateAndLoadsToTheSameKeyPair() throws Exception {
    // When a key pair is generated into a file
    Path file = dir.resolve("vapid/vapid.pem");
    VapidKeys generated = VapidKeys.generate(file);

    // Then only the owner can read it, and loading it derives the same public key (65 bytes, base64url)
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    VapidKeys loaded = VapidKeys.load(file);
    assertThat(loaded.publicKey().getW()).isEqualTo(generated.publicKey().getW());
    assertThat(loaded.publicKeyBase64Url()).hasSize(87).doesNotContain("=");
    assertThat(WebPushProvider.decode(loaded.publicKeyBase64Url())).hasSize(65).startsWith(4);
  }

  @Test
  void aKeyMadeByOpensslAsTheDocsSayLoadsWithTheSamePublicKey() throws Exception {
    // Given the commands of docs/reference/notification-providers.md (skipped without openssl)
    Path pem = dir.resolve("vapid.pem");
    String script = "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + pem
        + " && openssl ec -in " + pem + " -pubout -outform DER 2>/dev/null | tail -c 65 | base64 | tr '/+' '_-'"
        + " | tr -d '=\\n'";
    Process p;
    try {
      p = new ProcessBuilder("sh", "-c", "command -v openssl >/dev/null || exit 99; " + script).start();
    } catch (java.io.IOException e) {
      org.junit.jupiter.api.Assumptions.abort("no sh: " + e);
      return;
    }
    String publicKey = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
    int exit = p.waitFor();
    org.junit.jupiter.api.Assumptions.assumeTrue(exit != 99, "openssl not installed");
    assertThat(exit).isZero();

    // Then the file loads and derives the public key openssl prints
    assertThat(VapidKeys.load(pem).publicKeyBase64Url()).isEqualTo(publicKey);
  }

  @Test
  void aSendCarriesTheEncryptedPayloadTheHeadersAndAVapidJwtForTheEndpointsOrigin() throws Exception {
    // Given a push service answering 201 and a provider with a fresh VAPID key
    VapidKeys keys = VapidKeys.generate(dir.resolve("vapid.pem"));
    try (LocalHttpServer push = new LocalHttpServer(r -> LocalHttpServer.Answer.of(201))) {
      WebPushProvider provider = provider(keys, Clock.systemUTC());
      Notification n = TestNotifications.webPush(push.url() + "/push/sub1");

      // When it sends a notification
      SendOutcome outcome = provider.send(n, NotificationPayload.bytes(n)).get();

      // Then it is delivered, with RFC 8030/8291/8292's headers
      assertThat(outcome).isEqualTo(new SendOutcome.Delivered(201));
      LocalHttpServer.Request r = push.requests().get(0);
      assertThat(r.method()).isEqualTo("POST");
      assertThat(r.path()).isEqualTo("/push/sub1");
      assertThat(r.header("Content-Encoding")).isEqualTo("aes128gcm");
      assertThat(r.header("TTL")).isEqualTo("86400");
      assertThat(r.header("Urgency")).isEqualTo("high");
      assertThat(r.header("Topic")).isEqualTo(WebPushProvider.topic("d:alice:bob")).hasSize(32)
          .matches("[A-Za-z0-9_-]+");
      assertThat(r.body()).hasSize(86 + NotificationPayload.bytes(n).length + 17);
      String auth = r.header("Authorization");
      assertThat(auth).startsWith("vapid t=").endsWith(", k=" + keys.publicKeyBase64Url());
      String jwt = auth.substring("vapid t=".length(), auth.indexOf(','));
      JwtAssert.Verified v = JwtAssert.verify(jwt, keys.publicKey());
      assertThat(v.header().path("alg").asText()).isEqualTo("ES256");
      JsonNode claims = v.claims();
      assertThat(claims.path("aud").asText()).isEqualTo(push.url());
      assertThat(claims.path("sub").asText()).isEqualTo("mailto:ops@example.com");
      long exp = claims.path("exp").asLong();
      assertThat(exp - Instant.now().getEpochSecond()).isPositive().isLessThanOrEqualTo(24 * 3600);
    }
  }

  @Test
  void theJwtIsReusedPerOriginUntilShortlyBeforeItExpires() throws Exception {
    VapidKeys keys = VapidKeys.generate(dir.resolve("vapid.pem"));
    MutableClock clock = new MutableClock(NOW);
    WebPushProvider provider = provider(keys, clock);
    String first = provider.authorization("https://push.example.com");
    // 10 h later: still the same token; another origin: another token
    clock.now = NOW.plus(Duration.ofHours(10));
    assertThat(provider.authorization("https://push.example.com")).isEqualTo(first);
    assertThat(provider.authorization("https://other.example.com")).isNotEqualTo(first);
    // 11 h later: within the renewal hour of its 12 h lifetime, a new one
    clock.now = NOW.plus(Duration.ofHours(11)).plusSeconds(1);
    assertThat(provider.authorization("https://push.example.com")).isNotEqualTo(first);
  }

  @Test
  void answersBecomeOutcomes() throws Exception {
    VapidKeys keys = VapidKeys.generate(dir.resolve("vapid.pem"));
    try (LocalHttpServer push = new LocalHttpServer(r -> switch (r.path()) {
      case "/gone" -> LocalHttpServer.Answer.of(410);
      case "/busy" -> new LocalHttpServer.Answer(429, Map.of("Retry-After", "3"), "slow down");
      case "/down" -> LocalHttpServer.Answer.of(503);
      default -> LocalHttpServer.Answer.of(400);
    })) {
      WebPushProvider provider = provider(keys, Clock.systemUTC());
      assertThat(send(provider, push.url() + "/gone")).isInstanceOf(SendOutcome.Gone.class)
          .extracting(SendOutcome::status).isEqualTo(410);
      assertThat(send(provider, push.url() + "/busy"))
          .isEqualTo(new SendOutcome.Retry(429, "HTTP 429: slow down", Optional.of(Duration.ofSeconds(3))));
      assertThat(send(provider, push.url() + "/down")).isInstanceOf(SendOutcome.Retry.class);
      assertThat(send(provider, push.url() + "/bad")).isInstanceOf(SendOutcome.Failed.class);
    }
    // A closed port: a network error, worth retrying
    assertThat(send(provider(keys, Clock.systemUTC()), "http://127.0.0.1:1/x")).isInstanceOf(SendOutcome.Retry.class)
        .extracting(SendOutcome::status).isEqualTo(0);
  }

  @Test
  void aSubscriptionWithBrokenKeysFailsWithoutARequest() throws Exception {
    VapidKeys keys = VapidKeys.generate(dir.resolve("vapid.pem"));
    Notification n = Notification.newBuilder(TestNotifications.webPush("http://127.0.0.1:1/x")).setP256dh("AAAA")
        .build();
    assertThat(provider(keys, Clock.systemUTC()).send(n, new byte[1]).get()).isInstanceOf(SendOutcome.Failed.class);
  }

  @Test
  void anEndpointOutsideTheAllowListGetsNoRequest() throws Exception {
    VapidKeys keys = VapidKeys.generate(dir.resolve("vapid.pem"));
    try (LocalHttpServer push = new LocalHttpServer(r -> LocalHttpServer.Answer.of(201))) {
      WebPushProvider provider = new WebPushProvider(HttpClient.newHttpClient(), keys, "mailto:a@b",
          Duration.ofSeconds(5), Clock.systemUTC(), e -> e.startsWith(push.url() + "/allowed/"));
      assertThat(send(provider, push.url() + "/other/x")).isInstanceOf(SendOutcome.Failed.class);
      assertThat(send(provider, push.url() + "/allowed/x")).isInstanceOf(SendOutcome.Delivered.class);
      assertThat(push.requests()).extracting(LocalHttpServer.Request::path).containsExactly("/allowed/x");
    }
  }

  @Test
  void originAndTopic() {
    assertThat(WebPushProvider.origin(URI.create("https://Push.Example.com/a/b?c"))).isEqualTo(
        "https://push.example.com");
    assertThat(WebPushProvider.origin(URI.create("http://127.0.0.1:8080/push/x"))).isEqualTo("http://127.0.0.1:8080");
    assertThat(WebPushProvider.topic("g:1")).isNotEqualTo(WebPushProvider.topic("g:2")).hasSize(32);
  }

  static SendOutcome send(WebPushProvider provider, String endpoint) throws Exception {
    Notification n = TestNotifications.webPush(endpoint);
    return provider.send(n, NotificationPayload.bytes(n)).get();
  }

  static WebPushProvider provider(VapidKeys keys, Clock clock) {
    return new WebPushProvider(HttpClient.newHttpClient(), keys, "mailto:ops@example.com", Duration.ofSeconds(5),
        clock);
  }

  /** A clock the test moves. */
  static final class MutableClock extends Clock {
    volatile Instant now;

    MutableClock(Instant now) {
      this.now = now;
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
