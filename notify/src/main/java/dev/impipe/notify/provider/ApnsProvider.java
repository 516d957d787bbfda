package dev.impipe.notify.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.avro.Notification;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLContext;

/**
 * APNs over HTTP/2 with token-based auth: an ES256 JWT ({@code kid}: the .p8 key's id, {@code iss}: the team id)
 * reused up to {@link #JWT_REUSE} (Apple refuses one older than an hour, and one renewed more often than every 20
 * minutes), {@code POST {base}/3/device/{token}} with an alert, the conversation as {@code thread-id} and collapse id,
 * and an {@code apns-id} derived from the notificationId (a repeat is the same notification to Apple).
 */
public final class ApnsProvider implements Provider {

  public static final String NAME = "APNS";
  static final Duration JWT_REUSE = Duration.ofMinutes(50);
  /** APNs reasons that mean the device token is gone (besides 410). */
  static final Set<String> GONE_REASONS = Set.of("BadDeviceToken", "Unregistered", "DeviceTokenNotForTopic");

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final HttpClient http;
  private final PrivateKey key;
  private final String keyId;
  private final String teamId;
  private final String topic;
  private final String baseUrl;
  private final String sandboxUrl;
  private final Duration timeout;
  private final Clock clock;
  private String jwt;
  private Instant jwtIssuedAt = Instant.MIN;

  /**
   * @param sslContext trust for the server's certificate (tests: a local server's self-signed one), or null: the
   *     JDK's default trust store
   */
  public ApnsProvider(PrivateKey key, String keyId, String teamId, String topic, String baseUrl, String sandboxUrl,
      Duration timeout, Clock clock, SSLContext sslContext) {
    HttpClient.Builder builder = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2)
        .connectTimeout(timeout);
    if (sslContext != null) {
      builder.sslContext(sslContext);
    }
    this.http = builder.build();
    this.key = key;
    this.keyId = keyId;
    this.teamId = teamId;
    this.topic = topic;
    this.baseUrl = baseUrl.replaceAll("/+$", "");
    this.sandboxUrl = sandboxUrl.replaceAll("/+$", "");
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
    URI uri;
    try {
      body = body(notification, payload);
      String base = Boolean.TRUE.equals(notification.getSandbox()) ? sandboxUrl : baseUrl;
      uri = URI.create(base + "/3/device/" + notification.getToken().trim());
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.completedFuture(new SendOutcome.Failed(0, "cannot build the APNs request: " + e));
    }
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).header("authorization", "bearer " + jwt())
        .header("apns-topic", topic).header("apns-push-type", "alert").header("apns-priority", "10")
        .header("apns-collapse-id", WebPushProvider.topic(notification.getConversationId()))
        .header("apns-id", apnsId(notification.getNotificationId()))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    return HttpSends.send(http, request, this::outcome);
  }

  /** The notification's APNs id: a name-based UUID of its notificationId. */
  static String apnsId(String notificationId) {
    return UUID.nameUUIDFromBytes(notificationId.getBytes(StandardCharsets.UTF_8)).toString();
  }

  static byte[] body(Notification n, byte[] payload) throws IOException {
    ObjectNode json = (ObjectNode) MAPPER.readTree(payload);
    ObjectNode aps = MAPPER.createObjectNode();
    ObjectNode alert = aps.putObject("alert");
    alert.put("title", n.getSenderId() == null ? "New message" : n.getSenderId());
    alert.put("body", n.getPreview() != null ? n.getPreview()
        : n.getCount() == 1 ? "1 new message" : n.getCount() + " new messages");
    if (n.getUnreadTotal() != null) {
      aps.put("badge", n.getUnreadTotal());
    }
    aps.put("thread-id", n.getConversationId());
    ObjectNode out = MAPPER.createObjectNode();
    out.set("aps", aps);
    out.setAll(json);
    return MAPPER.writeValueAsBytes(out);
  }

  SendOutcome outcome(HttpResponse<String> response) {
    int status = response.statusCode();
    String reason = reason(response.body());
    String text = "HTTP " + status + (reason.isEmpty() ? "" : " " + reason);
    if (status == 400 && GONE_REASONS.contains(reason)) {
      return new SendOutcome.Gone(status, text);
    }
    return SendOutcome.ofStatus(status, text, HttpSends.retryAfter(response, clock));
  }

  private static String reason(String body) {
    try {
      JsonNode json = MAPPER.readTree(body == null || body.isBlank() ? "{}" : body);
      return json.path("reason").asText("");
    } catch (IOException e) {
      return "";
    }
  }

  /** The provider token, renewed after {@link #JWT_REUSE}. */
  synchronized String jwt() {
    Instant now = clock.instant();
    if (jwt == null || !jwtIssuedAt.plus(JWT_REUSE).isAfter(now)) {
      jwt = Jwt.es256(Jwt.object().put("kid", keyId), Jwt.object().put("iss", teamId).put("iat",
          now.getEpochSecond()), key);
      jwtIssuedAt = now;
    }
    return jwt;
  }
}
