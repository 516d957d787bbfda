package dev.impipe.notify.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.avro.Notification;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

/**
 * FCM HTTP v1: an OAuth2 access token from the service account (an RS256 JWT assertion exchanged at its
 * {@code token_uri}, cached until shortly before it expires), then {@code POST
 * {base}/v1/projects/{project}/messages:send} with the payload's fields as the message's {@code data} (strings) and the
 * conversation as Android's collapse key.
 */
public final class FcmProvider implements Provider {

  public static final String NAME = "FCM";
  static final String SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
  /** A cached token is replaced this long before it expires. */
  static final Duration RENEW_BEFORE = Duration.ofMinutes(5);

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final HttpClient http;
  private final FcmCredentials credentials;
  private final URI sendUri;
  private final Duration timeout;
  private final Clock clock;
  private CompletableFuture<AccessToken> token;

  /** An access token and when it expires. */
  record AccessToken(String value, Instant expiresAt) {}

  public FcmProvider(HttpClient http, FcmCredentials credentials, String baseUrl, Duration timeout, Clock clock) {
    this.http = http;
    this.credentials = credentials;
    this.sendUri = URI.create(baseUrl.replaceAll("/+$", "") + "/v1/projects/" + credentials.projectId()
        + "/messages:send");
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
      body = message(notification, payload);
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.completedFuture(new SendOutcome.Failed(0, "cannot build the FCM message: " + e));
    }
    return send(body, true);
  }

  private CompletableFuture<SendOutcome> send(byte[] body, boolean mayRefresh) {
    return token().thenCompose(t -> {
      HttpRequest request = HttpRequest.newBuilder(sendUri).timeout(timeout)
          .header("Authorization", "Bearer " + t.value()).header("Content-Type", "application/json; UTF-8")
          .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
      return HttpSends.send(http, request, this::outcome).thenCompose(outcome -> {
        if (outcome.status() == 401 && mayRefresh) {
          invalidate(t);
          return send(body, false);
        }
        return CompletableFuture.completedFuture(outcome);
      });
    }).exceptionally(e -> tokenFailure(e));
  }

  static byte[] message(Notification n, byte[] payload) throws IOException {
    ObjectNode data = MAPPER.createObjectNode();
    MAPPER.readTree(payload).fields().forEachRemaining(f -> data.put(f.getKey(), f.getValue().asText()));
    ObjectNode message = MAPPER.createObjectNode();
    ObjectNode m = message.putObject("message");
    m.put("token", n.getToken());
    m.set("data", data);
    m.putObject("android").put("collapse_key", WebPushProvider.topic(n.getConversationId())).put("priority", "high");
    return MAPPER.writeValueAsBytes(message);
  }

  /** The answer: 404 or UNREGISTERED/NOT_FOUND is gone; others by status (400 failed, 429/5xx retry). */
  SendOutcome outcome(HttpResponse<String> response) {
    int status = response.statusCode();
    String reason = HttpSends.reason(response);
    if (status >= 400 && unregistered(response.body())) {
      return new SendOutcome.Gone(status, reason);
    }
    return SendOutcome.ofStatus(status, reason, HttpSends.retryAfter(response, clock));
  }

  private static boolean unregistered(String body) {
    try {
      JsonNode error = MAPPER.readTree(body == null ? "" : body).path("error");
      if ("NOT_FOUND".equals(error.path("status").asText())) {
        return true;
      }
      for (JsonNode detail : error.path("details")) {
        if ("UNREGISTERED".equals(detail.path("errorCode").asText())) {
          return true;
        }
      }
      return false;
    } catch (IOException e) {
      return false;
    }
  }

  /** The cached token, or one fetch shared by every send waiting for it. */
  synchronized CompletableFuture<AccessToken> token() {
    Instant now = clock.instant();
    if (token == null || token.isCompletedExceptionally()
        || (token.isDone() && !token.join().expiresAt().minus(RENEW_BEFORE).isAfter(now))) {
      token = fetchToken(now);
    }
    return token;
  }

  private synchronized void invalidate(AccessToken stale) {
    if (token != null && token.isDone() && !token.isCompletedExceptionally() && token.join() == stale) {
      token = null;
    }
  }

  private CompletableFuture<AccessToken> fetchToken(Instant now) {
    ObjectNode header = Jwt.object().put("typ", "JWT");
    if (credentials.privateKeyId() != null) {
      header.put("kid", credentials.privateKeyId());
    }
    String assertion = Jwt.rs256(header, Jwt.object().put("iss", credentials.clientEmail()).put("scope", SCOPE)
        .put("aud", credentials.tokenUri()).put("iat", now.getEpochSecond())
        .put("exp", now.plus(Duration.ofHours(1)).getEpochSecond()), credentials.privateKey());
    String form = "grant_type=" + URLEncoder.encode("urn:ietf:params:oauth:grant-type:jwt-bearer",
        StandardCharsets.UTF_8) + "&assertion=" + assertion;
    HttpRequest request = HttpRequest.newBuilder(URI.create(credentials.tokenUri())).timeout(timeout)
        .header("Content-Type", "application/x-www-form-urlencoded").POST(HttpRequest.BodyPublishers.ofString(form))
        .build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
      if (r.statusCode() != 200) {
        throw new TokenException(SendOutcome.ofStatus(r.statusCode(), "token endpoint: " + HttpSends.reason(r),
            HttpSends.retryAfter(r, clock)));
      }
      try {
        JsonNode json = MAPPER.readTree(r.body());
        return new AccessToken(json.path("access_token").asText(),
            now.plusSeconds(json.path("expires_in").asLong(3600)));
      } catch (IOException e) {
        throw new TokenException(new SendOutcome.Retry(200, "token endpoint: unreadable answer",
            java.util.Optional.empty()));
      }
    });
  }

  private static SendOutcome tokenFailure(Throwable e) {
    Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    if (cause instanceof TokenException t) {
      // A token endpoint's 404 is a wrong token_uri, not a gone device.
      return t.outcome instanceof SendOutcome.Gone ? new SendOutcome.Failed(t.outcome.status(), t.outcome.reason())
          : t.outcome;
    }
    return HttpSends.ofError(cause);
  }

  /** The token endpoint's refusal, as the outcome of the send that needed it. */
  private static final class TokenException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient SendOutcome outcome;

    TokenException(SendOutcome outcome) {
      super(outcome.reason(), null, false, false);
      this.outcome = outcome;
    }
  }
}
