package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.avro.Notification;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WebhookProviderTest {

  static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
  static final Duration FIVE_MIN = Duration.ofMinutes(5);

  @Test
  void aNotificationIsPostedSignedWithItsIdAsIdempotencyKey() throws Exception {
    // Given a receiver answering 200
    try (LocalHttpServer receiver = new LocalHttpServer(r -> LocalHttpServer.Answer.of(200))) {
      WebhookProvider provider = new WebhookProvider(HttpClient.newHttpClient(), receiver.url() + "/hook", "s3cret",
          Duration.ofSeconds(5), Clock.fixed(NOW, ZoneOffset.UTC));
      Notification n = TestNotifications.base().build();

      // When a notification is sent
      SendOutcome outcome = provider.send(n, NotificationPayload.bytes(n)).get();

      // Then the receiver got the payload plus userId and deviceId, a signature it can verify, and the idempotency key
      assertThat(outcome).isEqualTo(new SendOutcome.Delivered(200));
      LocalHttpServer.Request r = receiver.requests().get(0);
      assertThat(r.path()).isEqualTo("/hook");
      assertThat(r.header("Content-Type")).isEqualTo("application/json");
      assertThat(r.header("Idempotency-Key")).isEqualTo("bob:phone:d:alice:bob:5");
      assertThat(r.header("X-Im-Timestamp")).isEqualTo(Long.toString(NOW.getEpochSecond()));
      assertThat(WebhookSignature.verify("s3cret", r.header("X-Im-Timestamp"), r.body(), r.header("X-Im-Signature"),
          NOW.plusSeconds(2), FIVE_MIN)).isTrue();
      JsonNode body = new ObjectMapper().readTree(r.body());
      assertThat(body.path("userId").asText()).isEqualTo("bob");
      assertThat(body.path("deviceId").asText()).isEqualTo("phone");
      assertThat(body.path("notificationId").asText()).isEqualTo("bob:phone:d:alice:bob:5");
      assertThat(body.path("count").asInt()).isEqualTo(2);
      assertThat(body.path("preview").asText()).isEqualTo("hello");
    }
  }

  @Test
  void aBusyReceiverIsRetriedAfterItsRetryAfter() throws Exception {
    try (LocalHttpServer receiver = new LocalHttpServer(
        r -> new LocalHttpServer.Answer(503, Map.of("Retry-After", "7"), ""))) {
      WebhookProvider provider = new WebhookProvider(HttpClient.newHttpClient(), receiver.url(), "k",
          Duration.ofSeconds(5), Clock.fixed(NOW, ZoneOffset.UTC));
      Notification n = TestNotifications.base().build();
      assertThat(provider.send(n, NotificationPayload.bytes(n)).get()).isInstanceOfSatisfying(SendOutcome.Retry.class,
          r -> assertThat(r.retryAfter()).contains(Duration.ofSeconds(7)));
    }
  }

  @Test
  void theSignatureIsHmacSha256OverTimestampDotBody() {
    // HMAC-SHA256("key", "1700000000.{}") computed independently (python3 hmac)
    assertThat(WebhookSignature.sign("key", 1_700_000_000L, "{}".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("v1=9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae");
  }

  @Test
  void verifyRefusesAChangedBodyAWrongSecretAnOldTimestampAndGarbage() {
    byte[] body = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
    long ts = NOW.getEpochSecond();
    String sig = WebhookSignature.sign("s", ts, body);
    String tsText = Long.toString(ts);
    assertThat(WebhookSignature.verify("s", tsText, body, sig, NOW, FIVE_MIN)).isTrue();
    assertThat(WebhookSignature.verify("s", tsText, body, sig, NOW.plus(FIVE_MIN), FIVE_MIN)).isTrue();
    assertThat(WebhookSignature.verify("s", tsText, "{\"a\":2}".getBytes(StandardCharsets.UTF_8), sig, NOW,
        FIVE_MIN)).isFalse();
    assertThat(WebhookSignature.verify("t", tsText, body, sig, NOW, FIVE_MIN)).isFalse();
    assertThat(WebhookSignature.verify("s", tsText, body, sig, NOW.plus(FIVE_MIN).plusSeconds(1), FIVE_MIN))
        .isFalse();
    assertThat(WebhookSignature.verify("s", tsText, body, sig, NOW.minus(FIVE_MIN).minusSeconds(1), FIVE_MIN))
        .isFalse();
    assertThat(WebhookSignature.verify("s", Long.toString(ts + 1), body, sig, NOW, FIVE_MIN)).isFalse();
    assertThat(WebhookSignature.verify("s", "x", body, sig, NOW, FIVE_MIN)).isFalse();
    assertThat(WebhookSignature.verify("s", tsText, body, sig.substring(3), NOW, FIVE_MIN)).isFalse();
    assertThat(WebhookSignature.verify("s", tsText, body, "v1=zz", NOW, FIVE_MIN)).isFalse();
    assertThat(WebhookSignature.verify("s", null, body, sig, NOW, FIVE_MIN)).isFalse();
    assertThat(WebhookSignature.verify("s", tsText, body, null, NOW, FIVE_MIN)).isFalse();
  }
}
