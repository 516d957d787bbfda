package dev.impipe.ingest;

import dev.impipe.ingest.quota.Refusal;
import dev.impipe.ingest.quota.UserQuotas;
import dev.impipe.ingest.quota.UserQuotas.Quota;
import dev.impipe.edge.auth.Principal;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.http.Response;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP endpoints for sending: messages, read markers, recalls, membership, cancelling scheduled messages. Each
 * request first takes its share of the caller's quotas ({@link UserQuotas}); over one it is answered {@code 429}
 * with {@code Retry-After} and nothing is published.
 */
public final class IngestRoutes {

  /** {@code POST /v1/messages}: exactly these fields, every one optional here (the publisher checks what is needed). */
  record MessageBody(String senderId, String senderDeviceId, String to, String groupId, String body,
      String clientMsgId, String deliverAt) {}

  /** {@code POST /v1/read}. */
  record ReadBody(String userId, String deviceId, String to, String groupId, Long upToSeq) {}

  /** {@code POST /v1/recall}. */
  record RecallBody(String senderId, String deviceId, String to, String groupId, String messageId) {}

  private static final Logger LOG = LoggerFactory.getLogger(IngestRoutes.class);

  private final MessagePublisher publisher;
  private final Duration timeout;
  private final Counter accepted;
  private final Counter invalid;
  private final UserQuotas quotas;
  private final Map<Quota, Counter> throttled = new EnumMap<>(Quota.class);

  public IngestRoutes(MessagePublisher publisher, IngestConfig config, MeterRegistry metrics) {
    this(publisher, config, metrics, System::nanoTime);
  }

  /** {@code nanoClock}: the monotonic clock of the quotas (a fake one in tests). */
  IngestRoutes(MessagePublisher publisher, IngestConfig config, MeterRegistry metrics, LongSupplier nanoClock) {
    this.publisher = publisher;
    this.timeout = config.publishTimeout();
    this.quotas = new UserQuotas(config.quotas(), nanoClock);
    for (Quota quota : Quota.values()) {
      String tag = quota.name().toLowerCase(Locale.ROOT);
      throttled.put(quota, Counter.builder("im.ingest.throttled").tag("quota", tag)
          .description("requests refused with 429: over a per-user quota").register(metrics));
      Gauge.builder("im.ingest.quota.users", quotas, q -> q.trackedUsers(quota)).tag("quota", tag)
          .description("users whose quota state this instance keeps").register(metrics);
    }
    this.accepted = Counter.builder("im.ingest.accepted").description("requests published").register(metrics);
    this.invalid = Counter.builder("im.ingest.invalid").description("requests refused with 4xx").register(metrics);
  }

  public void register(HttpApi http) {
    http.routeAsync("POST", "/v1/messages", this::postMessage);
    http.routeAsync("POST", "/v1/read", this::postRead);
    http.routeAsync("POST", "/v1/recall", this::postRecall);
    http.routeAsync("PUT", "/v1/groups/{groupId}/members/{userId}", r -> membership(r, true));
    http.routeAsync("DELETE", "/v1/groups/{groupId}/members/{userId}", r -> membership(r, false));
    http.routeAsync("DELETE", "/v1/scheduled/{messageId}", this::cancelScheduled);
  }

  /**
   * The acting user: the token's. A body field that names the caller ({@code senderId}, {@code userId}) may be
   * omitted; when given it must be the token's user (403 otherwise).
   */
  private String actor(Request request, String claimed, String field) {
    Principal caller = request.caller();
    if (claimed != null && !caller.is(claimed)) {
      throw forbidden("'" + field + "' must be your own user id (" + caller.userId() + ") or omitted");
    }
    return caller.userId();
  }

  /** The acting device: the body's, else the token's {@code dev}; a token for one device cannot speak for another. */
  private String device(Request request, String claimed, String field) {
    Principal caller = request.caller();
    if (claimed != null && caller.deviceId().isPresent() && !caller.deviceId().get().equals(claimed)) {
      throw forbidden("'" + field + "' must be this token's device (" + caller.deviceId().get() + ") or omitted");
    }
    return claimed != null ? claimed : caller.deviceId().orElse(null);
  }

  private CompletableFuture<Response> postMessage(Request request) {
    MessageBody body = body(request, MessageBody.class);
    SendRequest send = new SendRequest(actor(request, body.senderId(), "senderId"),
        device(request, body.senderDeviceId(), "senderDeviceId"), body.to(), body.groupId(), body.body(),
        body.clientMsgId(), instant(body.deliverAt(), "deliverAt"));
    if (send.deliverAt() != null) {
      charge(send.senderId(), Quota.SCHEDULES, Quota.SENDS);
    } else {
      charge(send.senderId(), Quota.SENDS);
    }
    return await(validated(() -> publisher.send(send))).thenApply(this::accepted);
  }

  private CompletableFuture<Response> postRead(Request request) {
    ReadBody body = body(request, ReadBody.class);
    if (body.upToSeq() == null) {
      throw invalid("upToSeq must be a whole number (the conversation seq read up to)");
    }
    String user = actor(request, body.userId(), "userId");
    String device = device(request, body.deviceId(), "deviceId");
    charge(user, Quota.SENDS);
    return await(validated(() -> publisher.markRead(user, device, body.to(), body.groupId(), body.upToSeq())))
        .thenApply(this::accepted);
  }

  private CompletableFuture<Response> postRecall(Request request) {
    RecallBody body = body(request, RecallBody.class);
    String sender = actor(request, body.senderId(), "senderId");
    String device = device(request, body.deviceId(), "deviceId");
    charge(sender, Quota.SENDS);
    return await(validated(() -> publisher.recall(sender, device, body.to(), body.groupId(), body.messageId())))
        .thenApply(this::accepted);
  }

  private CompletableFuture<Response> membership(Request request, boolean join) {
    String group = request.path("groupId");
    String user = request.path("userId");
    String actor = request.caller().userId();
    if (join && actor.equals(user)) {
      // Ingest cannot tell whether the group exists; a JOIN of oneself is the only JOIN that can create one.
      charge(actor, Quota.GROUPS, Quota.MEMBERSHIP);
    } else {
      charge(actor, Quota.MEMBERSHIP);
    }
    return await(validated(() -> join ? publisher.join(actor, group, user) : publisher.leave(actor, group, user)))
        .thenApply(v -> {
          accepted.increment();
          Map<String, Object> out = new LinkedHashMap<>();
          out.put("groupId", group);
          out.put("userId", user);
          out.put("op", join ? "JOIN" : "LEAVE");
          return Response.json(202, out);
        });
  }

  private CompletableFuture<Response> cancelScheduled(Request request) {
    String id = request.path("messageId");
    String requester = request.caller().userId();
    charge(requester, Quota.SENDS);
    return await(validated(() -> publisher.cancelScheduled(requester, id))).thenApply(v -> {
      accepted.increment();
      return Response.json(202, Map.of("messageId", id, "cancel", "requested"));
    });
  }

  private Response accepted(Accepted result) {
    accepted.increment();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("messageId", result.messageId());
    out.put("conversationId", result.conversationId());
    out.put("scheduled", result.scheduled());
    return Response.json(202, out);
  }

  /** Takes one token of each quota for {@code user}, or ends the request with {@code 429} + {@code Retry-After}. */
  private void charge(String user, Quota... wanted) {
    Optional<Refusal> refusal = quotas.take(user, wanted);
    if (refusal.isPresent()) {
      throttled.get(refusal.get().quota()).increment();
      throw new HttpError(429, refusal.get().reason(),
          Map.of("Retry-After", Long.toString(refusal.get().retryAfterSeconds())));
    }
  }

  private <T> CompletableFuture<T> validated(java.util.function.Supplier<CompletableFuture<T>> call) {
    try {
      return call.get();
    } catch (InvalidRequestException e) {
      throw invalid(e.getMessage());
    }
  }

  /**
   * Waits for Kafka's acknowledgement without holding a thread: a failure or no answer within the publish timeout
   * is a 503 with {@code Retry-After} (the record may or may not have landed; a retry with the same clientMsgId is
   * safe). Kafka's own error text goes to the log, not to the client.
   */
  private <T> CompletableFuture<T> await(CompletableFuture<T> future) {
    return future.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).exceptionallyCompose(e -> {
      Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
          ? e.getCause() : e;
      if (cause instanceof TimeoutException) {
        LOG.warn("Publish not acknowledged within {} ms", timeout.toMillis());
        return CompletableFuture.failedFuture(new HttpError(503, "not published within "
            + timeout.toMillis() + " ms, retry with the same clientMsgId", Map.of("Retry-After", "1")));
      }
      LOG.warn("Publish failed: {}", cause.toString());
      return CompletableFuture.failedFuture(new HttpError(503, "not published, retry with the same clientMsgId",
          Map.of("Retry-After", "1")));
    });
  }

  /** The body as {@code type}; a 400 (unknown field, wrong type, not JSON) counts as invalid. */
  private <T> T body(Request request, Class<T> type) {
    try {
      return request.jsonBody(type);
    } catch (HttpError e) {
      invalid.increment();
      throw e;
    }
  }

  private Instant instant(String text, String field) {
    if (text == null) {
      return null;
    }
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      throw invalid("'" + field + "' must be an ISO-8601 instant like 2026-11-22T10:15:30Z, got '" + text + "'");
    }
  }

  private HttpError forbidden(String message) {
    invalid.increment();
    return HttpError.forbidden(message);
  }

  private HttpError invalid(String message) {
    invalid.increment();
    return HttpError.badRequest(message);
  }
}
