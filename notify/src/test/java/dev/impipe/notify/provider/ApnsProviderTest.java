package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.avro.Notification;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PfxOptions;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PublicKey;
import java.security.interfaces.ECPrivateKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * APNs against a local HTTP/2 TLS server (Vert.x, ALPN, a self-signed certificate made by keytool) that checks what
 * Apple checks: HTTP/2, the path, the provider token's ES256 signature with the .p8 key's public key, its kid and iss,
 * the topic, the push type and the collapse id's length; it answers 200, 410 Unregistered, 400 BadDeviceToken or 429.
 */
class ApnsProviderTest {

  static final String KEY_ID = "ABC123DEFG";
  static final String TEAM = "TEAM456789";
  static final String TOPIC = "dev.impipe.app";
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  static Path dir;

  static Vertx vertx;
  static HttpServer server;
  static SSLContext trust;
  static ECPrivateKey key;
  static PublicKey publicKey;
  static final List<Seen> seen = new CopyOnWriteArrayList<>();

  /** What the server saw of one request. */
  record Seen(HttpVersion version, String path, String collapseId, String apnsId, JsonNode body, String problem) {}

  @BeforeAll
  static void server() throws Exception {
    var g = KeyPairGenerator.getInstance("EC");
    g.initialize(EcKeys.P256);
    var pair = g.generateKeyPair();
    key = (ECPrivateKey) pair.getPrivate();
    publicKey = pair.getPublic();
    Files.writeString(dir.resolve("AuthKey.p8"), Pem.encode(key));
    Path keystore = dir.resolve("server.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
        "-genkeypair", "-alias", "apns", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=127.0.0.1",
        "-ext", "san=ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12", "-keystore", keystore.toString(),
        "-storepass", "changeit", "-keypass", "changeit").redirectErrorStream(true).start();
    String out = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue()).as(out).isZero();
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      ks.load(in, "changeit".toCharArray());
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    trust = SSLContext.getInstance("TLS");
    trust.init(null, tmf.getTrustManagers(), null);

    vertx = Vertx.vertx();
    server = vertx.createHttpServer(new HttpServerOptions().setSsl(true).setUseAlpn(true)
        .setKeyCertOptions(new PfxOptions().setPath(keystore.toString()).setPassword("changeit")))
        .requestHandler(ApnsProviderTest::handle);
    server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  static void handle(HttpServerRequest req) {
    req.body().onSuccess(buffer -> {
      String problem = check(req);
      JsonNode body;
      try {
        body = JSON.readTree(buffer.toString(StandardCharsets.UTF_8));
      } catch (Exception e) {
        body = null;
        problem = "body is not JSON";
      }
      seen.add(new Seen(req.version(), req.path(), req.getHeader("apns-collapse-id"), req.getHeader("apns-id"), body,
          problem));
      String device = req.path().substring(req.path().lastIndexOf('/') + 1);
      var response = req.response().putHeader("apns-id", String.valueOf(req.getHeader("apns-id")));
      if (problem != null) {
        response.setStatusCode(403).end("{\"reason\":\"InvalidProviderToken\"}");
      } else if (device.equals("gone")) {
        response.setStatusCode(410).end("{\"reason\":\"Unregistered\",\"timestamp\":1700000000000}");
      } else if (device.equals("bad")) {
        response.setStatusCode(400).end("{\"reason\":\"BadDeviceToken\"}");
      } else if (device.equals("busy")) {
        response.setStatusCode(429).end("{\"reason\":\"TooManyRequests\"}");
      } else {
        response.setStatusCode(200).end();
      }
    });
  }

  /** What real APNs refuses; null when the request passes. */
  static String check(HttpServerRequest req) {
    if (req.version() != HttpVersion.HTTP_2) {
      return "not HTTP/2";
    }
    if (!req.method().name().equals("POST") || !req.path().matches("(/sandbox)?/3/device/[a-z0-9]+")) {
      return "path " + req.path();
    }
    String auth = req.getHeader("authorization");
    if (auth == null || !auth.startsWith("bearer ")) {
      return "no bearer token";
    }
    try {
      JwtAssert.Verified jwt = JwtAssert.verify(auth.substring(7), publicKey);
      if (!jwt.header().path("alg").asText().equals("ES256") || !jwt.header().path("kid").asText().equals(KEY_ID)
          || !jwt.claims().path("iss").asText().equals(TEAM) || !jwt.claims().path("iat").canConvertToLong()) {
        return "token claims " + jwt;
      }
    } catch (Throwable e) {
      return "token signature: " + e;
    }
    if (!TOPIC.equals(req.getHeader("apns-topic")) || !"alert".equals(req.getHeader("apns-push-type"))
        || !"10".equals(req.getHeader("apns-priority"))) {
      return "topic, push type or priority";
    }
    String collapse = req.getHeader("apns-collapse-id");
    if (collapse == null || collapse.getBytes(StandardCharsets.UTF_8).length > 64) {
      return "collapse id";
    }
    return null;
  }

  ApnsProvider provider(Clock clock) {
    String base = "https://127.0.0.1:" + server.actualPort();
    return new ApnsProvider(Pem.readPrivateKey(dir.resolve("AuthKey.p8"), "EC"), KEY_ID, TEAM, TOPIC, base,
        base + "/sandbox", Duration.ofSeconds(10), clock, trust);
  }

  static SendOutcome send(ApnsProvider provider, String token, boolean sandbox) throws Exception {
    Notification n = TestNotifications.base().setProvider(ApnsProvider.NAME).setToken(token).setSandbox(sandbox)
        .build();
    return provider.send(n, NotificationPayload.bytes(n)).get(30, TimeUnit.SECONDS);
  }

  @Test
  void aNotificationPassesTheServersChecksOverHttp2() throws Exception {
    seen.clear();
    SendOutcome outcome = send(provider(Clock.systemUTC()), "a1b2c3", false);
    assertThat(seen).hasSize(1);
    Seen s = seen.get(0);
    assertThat(s.problem()).isNull();
    assertThat(outcome).isEqualTo(new SendOutcome.Delivered(200));
    assertThat(s.version()).isEqualTo(HttpVersion.HTTP_2);
    assertThat(s.path()).isEqualTo("/3/device/a1b2c3");
    assertThat(s.apnsId()).isEqualTo(ApnsProvider.apnsId("bob:phone:d:alice:bob:5"));
    assertThat(s.collapseId()).isEqualTo(WebPushProvider.topic("d:alice:bob"));
    JsonNode aps = s.body().path("aps");
    assertThat(aps.path("alert").path("title").asText()).isEqualTo("alice");
    assertThat(aps.path("alert").path("body").asText()).isEqualTo("hello");
    assertThat(aps.path("badge").asLong()).isEqualTo(3);
    assertThat(aps.path("thread-id").asText()).isEqualTo("d:alice:bob");
    assertThat(s.body().path("notificationId").asText()).isEqualTo("bob:phone:d:alice:bob:5");
    assertThat(s.body().path("count").asInt()).isEqualTo(2);
  }

  @Test
  void aSandboxRegistrationGoesToTheSandboxUrl() throws Exception {
    seen.clear();
    assertThat(send(provider(Clock.systemUTC()), "d4", true)).isEqualTo(new SendOutcome.Delivered(200));
    assertThat(seen.get(0).path()).isEqualTo("/sandbox/3/device/d4");
  }

  @Test
  void answersBecomeOutcomes() throws Exception {
    ApnsProvider provider = provider(Clock.systemUTC());
    assertThat(send(provider, "gone", false)).isEqualTo(new SendOutcome.Gone(410, "HTTP 410 Unregistered"));
    assertThat(send(provider, "bad", false)).isEqualTo(new SendOutcome.Gone(400, "HTTP 400 BadDeviceToken"));
    assertThat(send(provider, "busy", false))
        .isEqualTo(new SendOutcome.Retry(429, "HTTP 429 TooManyRequests", Optional.empty()));
  }

  @Test
  void aTokenSignedWithAnotherKeyIsRefusedForGood() throws Exception {
    var g = KeyPairGenerator.getInstance("EC");
    g.initialize(EcKeys.P256);
    String base = "https://127.0.0.1:" + server.actualPort();
    ApnsProvider wrongKey = new ApnsProvider(g.generateKeyPair().getPrivate(), KEY_ID, TEAM, TOPIC, base, base,
        Duration.ofSeconds(10), Clock.systemUTC(), trust);
    assertThat(send(wrongKey, "ok", false)).isEqualTo(new SendOutcome.Failed(403, "HTTP 403 InvalidProviderToken"));
  }

  @Test
  void theProviderTokenIsReusedFor50Minutes() {
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    WebPushProviderTest.MutableClock clock = new WebPushProviderTest.MutableClock(t0);
    ApnsProvider provider = provider(clock);
    String first = provider.jwt();
    clock.now = t0.plus(Duration.ofMinutes(49));
    assertThat(provider.jwt()).isEqualTo(first);
    clock.now = t0.plus(Duration.ofMinutes(50));
    assertThat(provider.jwt()).isNotEqualTo(first);
  }

  @Test
  void apnsIdIsAStableUuidPerNotification() {
    assertThat(ApnsProvider.apnsId("n1")).isEqualTo(ApnsProvider.apnsId("n1")).isNotEqualTo(ApnsProvider.apnsId("n2"))
        .matches("[0-9a-f-]{36}");
  }
}
