package dev.impipe.notify.provider;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.avro.Notification;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * POSTs each notification as JSON (the device payload plus {@code userId}, {@code deviceId}) to the deployment's
 * webhook URL, signed ({@link WebhookSignature}), with {@code Idempotency-Key: <notificationId>} so a receiver can drop
 * the repeats of at-least-once sending.
 */
public final class WebhookProvider implements Provider {

  public static final String NAME = "WEBHOOK";

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final HttpClient http;
  private final URI url;
  private final String secret;
  private final Duration timeout;
  private final Clock clock;

  public WebhookProvider(HttpClient http, String url, String secret, Duration timeout, Clock clock) {
    this.http = http;
    this.url = URI.create(url);
    this.secret = secret;
    this.timeout = timeout;
    this.clock = clock;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public CompletableFuture<SendOutcome> send(Notification notification, byte[] payload) {
    byte[] body;
    try {
      ObjectNode json = (ObjectNode) MAPPER.readTree(payload);
      json.put("userId", notification.getUserId()).put("deviceId", notification.getDeviceId());
      body = json.toString().getBytes(StandardCharsets.UTF_8);
    } catch (IOException | ClassCastException e) {
      return CompletableFuture.completedFuture(new SendOutcome.Failed(0, "payload is not a JSON object"));
    }
    long timestamp = clock.instant().getEpochSecond();
    HttpRequest request = HttpRequest.newBuilder(url).timeout(timeout).header("Content-Type", "application/json")
        .header(WebhookSignature.TIMESTAMP_HEADER, Long.toString(timestamp))
        .header(WebhookSignature.SIGNATURE_HEADER, WebhookSignature.sign(secret, timestamp, body))
        .header("Idempotency-Key", notification.getNotificationId())
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    return HttpSends.send(http, request,
        r -> SendOutcome.ofStatus(r.statusCode(), HttpSends.reason(r), HttpSends.retryAfter(r, clock)));
  }
}
