package dev.impipe.notify.provider;

import dev.impipe.avro.Notification;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Web Push (RFC 8030): POSTs the payload, encrypted for the subscription (RFC 8291, {@code aes128gcm}), to its
 * endpoint, signed with the deployment's VAPID key (RFC 8292). {@code Topic} is a collapse key per conversation, so a
 * push service holding an undelivered notification replaces it with the newer one.
 */
public final class WebPushProvider implements Provider {

  public static final String NAME = "WEBPUSH";
  /** How long the push service keeps a message for an offline browser (seconds). */
  static final int TTL_SECONDS = 86_400;
  /** Lifetime of a VAPID JWT (RFC 8292: at most 24 h). */
  static final Duration JWT_LIFETIME = Duration.ofHours(12);
  /** A cached JWT is replaced this long before it expires. */
  static final Duration JWT_RENEW_BEFORE = Duration.ofHours(1);

  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

  private final HttpClient http;
  private final VapidKeys keys;
  private final String subject;
  private final Duration timeout;
  private final Clock clock;
  private final Predicate<String> endpointAllowed;
  private final Map<String, CachedJwt> jwtByOrigin = new ConcurrentHashMap<>();

  private record CachedJwt(String token, Instant expiresAt) {}

  /** A provider that sends to any endpoint (tests); see the other constructor. */
  public WebPushProvider(HttpClient http, VapidKeys keys, String subject, Duration timeout, Clock clock) {
    this(http, keys, subject, timeout, clock, endpoint -> true);
  }

  /**
   * @param endpointAllowed checked again before each request ({@code IM_NOTIFY_PUSH_ENDPOINTS}): a registration made
   *     under a wider allow-list than today's gets no request
   */
  public WebPushProvider(HttpClient http, VapidKeys keys, String subject, Duration timeout, Clock clock,
      Predicate<String> endpointAllowed) {
    this.endpointAllowed = endpointAllowed;
    this.http = http;
    this.keys = keys;
    this.subject = subject;
    this.timeout = timeout;
    this.clock = clock;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public CompletableFuture<SendOutcome> send(Notification notification, byte[] payload) {
    if (!endpointAllowed.test(notification.getEndpoint())) {
      return CompletableFuture.completedFuture(new SendOutcome.Failed(0,
          "endpoint is not under IM_NOTIFY_PUSH_ENDPOINTS"));
    }
    URI endpoint;
    byte[] body;
    try {
      endpoint = URI.create(notification.getEndpoint());
      body = WebPushEncryption.encrypt(payload, decode(notification.getP256dh()), decode(notification.getAuth()));
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(new SendOutcome.Failed(0, "invalid subscription: " + e.getMessage()));
    }
    HttpRequest request = HttpRequest.newBuilder(endpoint).timeout(timeout)
        .header("Content-Type", "application/octet-stream").header("Content-Encoding", "aes128gcm")
        .header("TTL", Integer.toString(TTL_SECONDS)).header("Urgency", "high")
        .header("Topic", topic(notification.getConversationId()))
        .header("Authorization", authorization(origin(endpoint)))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    return HttpSends.send(http, request,
        r -> SendOutcome.ofStatus(r.statusCode(), HttpSends.reason(r), HttpSends.retryAfter(r, clock)));
  }

  /** {@code vapid t=<JWT>, k=<public key>} for {@code origin}, the JWT reused until shortly before it expires. */
  String authorization(String origin) {
    Instant now = clock.instant();
    CachedJwt jwt = jwtByOrigin.compute(origin, (o, cached) -> cached != null
        && cached.expiresAt().minus(JWT_RENEW_BEFORE).isAfter(now) ? cached : newJwt(o, now));
    return "vapid t=" + jwt.token() + ", k=" + keys.publicKeyBase64Url();
  }

  private CachedJwt newJwt(String origin, Instant now) {
    Instant exp = now.plus(JWT_LIFETIME);
    String token = Jwt.es256(Jwt.object().put("typ", "JWT"),
        Jwt.object().put("aud", origin).put("exp", exp.getEpochSecond()).put("sub", subject), keys.privateKey());
    return new CachedJwt(token, exp);
  }

  /** The endpoint's origin ({@code scheme://host[:port]}), the JWT's audience. */
  static String origin(URI endpoint) {
    String scheme = endpoint.getScheme().toLowerCase(Locale.ROOT);
    String host = endpoint.getHost().toLowerCase(Locale.ROOT);
    return scheme + "://" + host + (endpoint.getPort() < 0 ? "" : ":" + endpoint.getPort());
  }

  /** The collapse key of a conversation: base64url of the first 24 bytes of its SHA-256 (32 characters). */
  static String topic(String conversationId) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(conversationId.getBytes(StandardCharsets.UTF_8));
      return B64.encodeToString(Arrays.copyOf(digest, 24));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Base64url (or standard base64, which some user agents send), with or without padding. */
  static byte[] decode(String value) {
    if (value == null) {
      throw new IllegalArgumentException("missing key");
    }
    return Base64.getUrlDecoder().decode(value.trim().replace('+', '-').replace('/', '_'));
  }
}
