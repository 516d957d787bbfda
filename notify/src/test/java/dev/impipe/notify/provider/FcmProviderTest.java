package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.avro.Notification;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** FCM HTTP v1 against a local OAuth2 token endpoint and messages:send that check what Google checks. */
class FcmProviderTest {

  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path dir;

  KeyPair rsa;
  final AtomicInteger tokensIssued = new AtomicInteger();

  @BeforeEach
  void key() throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(2048);
    rsa = g.generateKeyPair();
  }

  LocalHttpServer.Answer answer(LocalHttpServer.Request r) {
    try {
      if (r.path().equals("/token")) {
        Map<String, String> form = form(r.bodyText());
        assertThat(form.get("grant_type")).isEqualTo("urn:ietf:params:oauth:grant-type:jwt-bearer");
        JwtAssert.Verified jwt = JwtAssert.verify(form.get("assertion"), rsa.getPublic());
        assertThat(jwt.header().path("alg").asText()).isEqualTo("RS256");
        assertThat(jwt.claims().path("iss").asText()).isEqualTo("sender@p1.iam.gserviceaccount.com");
        assertThat(jwt.claims().path("scope").asText()).isEqualTo(FcmProvider.SCOPE);
        assertThat(jwt.claims().path("exp").asLong() - jwt.claims().path("iat").asLong()).isEqualTo(3600);
        return new LocalHttpServer.Answer(200, Map.of("Content-Type", "application/json"),
            "{\"access_token\":\"tok" + tokensIssued.incrementAndGet() + "\",\"expires_in\":3599}");
      }
      assertThat(r.path()).isEqualTo("/v1/projects/p1/messages:send");
      String bearer = r.header("Authorization");
      String device = JSON.readTree(r.body()).path("message").path("token").asText();
      return switch (device) {
        case "ok" -> new LocalHttpServer.Answer(200, Map.of(), "{\"name\":\"projects/p1/messages/1\"}");
        case "gone" -> new LocalHttpServer.Answer(404, Map.of(), "{\"error\":{\"code\":404,\"status\":\"NOT_FOUND\","
            + "\"details\":[{\"@type\":\"type.googleapis.com/google.firebase.fcm.v1.FcmError\","
            + "\"errorCode\":\"UNREGISTERED\"}]}}");
        case "bad" -> new LocalHttpServer.Answer(400, Map.of(), "{\"error\":{\"status\":\"INVALID_ARGUMENT\"}}");
        case "busy" -> new LocalHttpServer.Answer(429, Map.of("Retry-After", "5"), "");
        case "expired" -> bearer.equals("Bearer tok1") ? LocalHttpServer.Answer.of(401)
            : new LocalHttpServer.Answer(200, Map.of(), "{}");
        default -> LocalHttpServer.Answer.of(401);
      };
    } catch (Exception e) {
      return new LocalHttpServer.Answer(500, Map.of(), "test server: " + e);
    }
  }

  @Test
  void aMessageCarriesThePayloadAsStringDataWithATokenFromTheServiceAccount() throws Exception {
    try (LocalHttpServer fcm = new LocalHttpServer(this::answer)) {
      FcmProvider provider = provider(fcm);
      // When two notifications are sent
      assertThat(send(provider, "ok")).isEqualTo(new SendOutcome.Delivered(200));
      assertThat(send(provider, "ok")).isEqualTo(new SendOutcome.Delivered(200));
      // Then one token served both, and the message is FCM v1's
      assertThat(tokensIssued).hasValue(1);
      LocalHttpServer.Request r = fcm.requests().get(1);
      assertThat(r.header("Authorization")).isEqualTo("Bearer tok1");
      JsonNode m = JSON.readTree(r.body()).path("message");
      assertThat(m.path("token").asText()).isEqualTo("ok");
      assertThat(m.path("data").path("notificationId").asText()).isEqualTo("bob:phone:d:alice:bob:5");
      assertThat(m.path("data").path("count").isTextual()).isTrue();
      assertThat(m.path("data").path("count").asText()).isEqualTo("2");
      assertThat(m.path("android").path("priority").asText()).isEqualTo("high");
      assertThat(m.path("android").path("collapse_key").asText()).isEqualTo(WebPushProvider.topic("d:alice:bob"));
    }
  }

  @Test
  void errorsMapToOutcomes() throws Exception {
    try (LocalHttpServer fcm = new LocalHttpServer(this::answer)) {
      FcmProvider provider = provider(fcm);
      assertThat(send(provider, "gone")).isInstanceOf(SendOutcome.Gone.class);
      assertThat(send(provider, "bad")).isInstanceOf(SendOutcome.Failed.class);
      assertThat(send(provider, "busy")).isInstanceOfSatisfying(SendOutcome.Retry.class,
          r -> assertThat(r.retryAfter()).contains(Duration.ofSeconds(5)));
    }
  }

  @Test
  void a401RefreshesTheTokenOnceThenFails() throws Exception {
    try (LocalHttpServer fcm = new LocalHttpServer(this::answer)) {
      FcmProvider provider = provider(fcm);
      // Given tok1 is no longer accepted for this device: a new token, and the second try is delivered
      assertThat(send(provider, "expired")).isEqualTo(new SendOutcome.Delivered(200));
      assertThat(tokensIssued).hasValue(2);
      // Given a device always answered 401: one refresh, then failed
      assertThat(send(provider, "denied")).isInstanceOf(SendOutcome.Failed.class).extracting(SendOutcome::status)
          .isEqualTo(401);
      assertThat(tokensIssued).hasValue(3);
      assertThat(fcm.requests().stream().filter(r -> r.path().endsWith(":send")).count()).isEqualTo(4);
    }
  }

  @Test
  void aTokenEndpointThatRefusesTheCredentialsFailsTheSend() throws Exception {
    try (LocalHttpServer fcm = new LocalHttpServer(r -> new LocalHttpServer.Answer(400, Map.of(),
        "{\"error\":\"invalid_grant\"}"))) {
      assertThat(send(provider(fcm), "ok")).isInstanceOf(SendOutcome.Failed.class);
    }
    try (LocalHttpServer fcm = new LocalHttpServer(r -> LocalHttpServer.Answer.of(503))) {
      assertThat(send(provider(fcm), "ok")).isInstanceOf(SendOutcome.Retry.class);
    }
  }

  FcmProvider provider(LocalHttpServer fcm) throws Exception {
    Path file = dir.resolve("fcm-" + System.nanoTime() + ".json");
    Files.writeString(file, JSON.writeValueAsString(Map.of("type", "service_account", "project_id", "p1",
        "private_key_id", "k1", "private_key", Pem.encode(rsa.getPrivate()), "client_email",
        "sender@p1.iam.gserviceaccount.com", "token_uri", fcm.url() + "/token")));
    return new FcmProvider(HttpClient.newHttpClient(), FcmCredentials.load(file), fcm.url() + "/",
        Duration.ofSeconds(5), Clock.systemUTC());
  }

  static SendOutcome send(FcmProvider provider, String token) throws Exception {
    Notification n = TestNotifications.base().setProvider(FcmProvider.NAME).setToken(token).build();
    return provider.send(n, NotificationPayload.bytes(n)).get();
  }

  static Map<String, String> form(String body) {
    Map<String, String> out = new java.util.HashMap<>();
    for (String pair : body.split("&")) {
      List<String> kv = List.of(pair.split("=", 2));
      out.put(kv.get(0), URLDecoder.decode(kv.get(1), StandardCharsets.UTF_8));
    }
    return out;
  }
}
