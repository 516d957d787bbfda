package dev.impipe.ingest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.runtime.http.HttpApi;
import dev.impipe.runtime.http.HttpError;
import dev.impipe.runtime.http.Request;
import dev.impipe.runtime.http.Response;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The HTTP endpoints for sending: messages, read markers, recalls, membership, cancelling scheduled messages. */
public final class IngestRoutes {

  private static final Set<String> MESSAGE_FIELDS =
      Set.of("senderId", "senderDeviceId", "to", "groupId", "body", "clientMsgId", "deliverAt");
  private static final Set<String> READ_FIELDS = Set.of("userId", "deviceId", "to", "groupId", "upToSeq");
  private static final Set<String> RECALL_FIELDS = Set.of("senderId", "deviceId", "to", "groupId", "messageId");

  private final MessagePublisher publisher;
  private final Duration timeout;
  private final Counter accepted;
  private final Counter invalid;

  public IngestRoutes(MessagePublisher publisher, IngestConfig config, MeterRegistry metrics) {
    this.publisher = publisher;
    this.timeout = config.publishTimeout();
    this.accepted = Counter.builder("im.ingest.accepted").description("requests published").register(metrics);
    this.invalid = Counter.builder("im.ingest.invalid").description("requests refused with 4xx").register(metrics);
  }

  public void register(HttpApi http) {
    http.route("POST", "/v1/messages", this::postMessage);
    http.route("POST", "/v1/read", this::postRead);
    http.route("POST", "/v1/recall", this::postRecall);
    http.route("PUT", "/v1/groups/{groupId}/members/{userId}", r -> membership(r, true));
    http.route("DELETE", "/v1/groups/{groupId}/members/{userId}", r -> membership(r, false));
    http.route("DELETE", "/v1/scheduled/{messageId}", this::cancelScheduled);
  }

  private Response postMessage(Request request) {
    JsonNode body = json(request, MESSAGE_FIELDS);
    SendRequest send = new SendRequest(text(body, "senderId"), text(body, "senderDeviceId"), text(body, "to"),
        text(body, "groupId"), text(body, "body"), text(body, "clientMsgId"), instant(body, "deliverAt"));
    Accepted result = await(validated(() -> publisher.send(send)));
    return accepted(result);
  }

  private Response postRead(Request request) {
    JsonNode body = json(request, READ_FIELDS);
    JsonNode seq = body.get("upToSeq");
    if (seq == null || !seq.canConvertToLong() || !seq.isIntegralNumber()) {
      throw invalid("upToSeq must be a whole number (the conversation seq read up to)");
    }
    Accepted result = await(validated(() -> publisher.markRead(text(body, "userId"), text(body, "deviceId"),
        text(body, "to"), text(body, "groupId"), seq.longValue())));
    return accepted(result);
  }

  private Response postRecall(Request request) {
    JsonNode body = json(request, RECALL_FIELDS);
    Accepted result = await(validated(() -> publisher.recall(text(body, "senderId"), text(body, "deviceId"),
        text(body, "to"), text(body, "groupId"), text(body, "messageId"))));
    return accepted(result);
  }

  private Response membership(Request request, boolean join) {
    String group = request.path("groupId");
    String user = request.path("userId");
    await(validated(() -> join ? publisher.join(group, user) : publisher.leave(group, user)));
    accepted.increment();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("groupId", group);
    out.put("userId", user);
    out.put("op", join ? "JOIN" : "LEAVE");
    return Response.json(202, out);
  }

  private Response cancelScheduled(Request request) {
    String id = request.path("messageId");
    await(validated(() -> publisher.cancelScheduled(id)));
    accepted.increment();
    return Response.json(202, Map.of("messageId", id, "cancel", "requested"));
  }

  private Response accepted(Accepted result) {
    accepted.increment();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("messageId", result.messageId());
    out.put("conversationId", result.conversationId());
    out.put("scheduled", result.scheduled());
    return Response.json(202, out);
  }

  private <T> CompletableFuture<T> validated(java.util.function.Supplier<CompletableFuture<T>> call) {
    try {
      return call.get();
    } catch (InvalidRequestException e) {
      throw invalid(e.getMessage());
    }
  }

  private <T> T await(CompletableFuture<T> future) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new HttpError(503, "not published, Kafka refused or timed out: " + e.getCause().getMessage(),
          Map.of("Retry-After", "1"));
    } catch (TimeoutException e) {
      throw new HttpError(503, "not published within " + timeout.toSeconds() + " s", Map.of("Retry-After", "1"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HttpError(503, "interrupted");
    }
  }

  private JsonNode json(Request request, Set<String> allowed) {
    JsonNode body;
    try {
      body = request.jsonObject();
    } catch (HttpError e) {
      invalid.increment();
      throw e;
    }
    for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
      String field = it.next();
      if (!allowed.contains(field)) {
        throw invalid("unknown field '" + field + "'; allowed: " + String.join(", ", allowed.stream().sorted()
            .toList()));
      }
    }
    return body;
  }

  private String text(JsonNode body, String field) {
    JsonNode node = body.get(field);
    if (node == null || node.isNull()) {
      return null;
    }
    if (!node.isTextual()) {
      throw invalid("'" + field + "' must be a string");
    }
    return node.asText();
  }

  private Instant instant(JsonNode body, String field) {
    String text = text(body, field);
    if (text == null) {
      return null;
    }
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      throw invalid("'" + field + "' must be an ISO-8601 instant like 2026-11-22T10:15:30Z, got '" + text + "'");
    }
  }

  private HttpError invalid(String message) {
    invalid.increment();
    return HttpError.badRequest(message);
  }
}
