package dev.impipe.inbox.http;

import static dev.impipe.inbox.InboxStoreTopology.CURSOR_STORE;
import static dev.impipe.inbox.InboxStoreTopology.INBOX_STORE;
import static dev.impipe.inbox.InboxStoreTopology.TIMELINE_STORE;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.query.InteractiveQueryView;
import dev.impipe.inbox.query.NotServableException;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.Timelines;
import dev.impipe.runtime.http.HttpApi;
import dev.impipe.runtime.http.HttpError;
import dev.impipe.runtime.http.Request;
import dev.impipe.runtime.http.Response;
import dev.impipe.runtime.topics.TopicNames;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.KafkaStreams;

/** The sync, cursor and history endpoints of DESIGN.md, answered from the stores of the owning instance. */
public final class InboxRoutes {

  public static final int DEFAULT_LIMIT = 100;
  public static final int MAX_LIMIT = 1_000;

  private static final long CURSOR_POLL_MS = 5;

  private final KafkaStreams streams;
  private final TopicNames topics;
  private final OwnerRouter router;
  private final Producer<String, DeviceCursor> cursorProducer;
  private final long timeoutMs;

  public InboxRoutes(KafkaStreams streams, TopicNames topics, OwnerRouter router,
      Producer<String, DeviceCursor> cursorProducer, long timeoutMs) {
    this.streams = streams;
    this.topics = topics;
    this.router = router;
    this.cursorProducer = cursorProducer;
    this.timeoutMs = timeoutMs;
  }

  public void register(HttpApi http) {
    http.route("GET", "/v1/users/{userId}/inbox", this::inbox);
    http.route("GET", "/v1/users/{userId}/devices/{deviceId}/sync", this::sync);
    http.route("GET", "/v1/users/{userId}/devices/{deviceId}/cursor", this::getCursor);
    http.route("PUT", "/v1/users/{userId}/devices/{deviceId}/cursor", this::putCursor);
    http.route("GET", "/v1/conversations/{conversationId}/messages", this::history);
  }

  /** {@code GET /v1/users/{userId}/inbox?after&limit&minSeq}: entries with seq > after, ascending. */
  Response inbox(Request request) {
    String user = request.path("userId");
    long after = request.longQuery("after", Timelines.START, Timelines.START, Long.MAX_VALUE);
    int limit = limit(request);
    OptionalLong minSeq = minSeq(request);
    return router.route("inbox", INBOX_STORE, user, request, partition -> {
      Page<InboxEntry> page = Timelines.after(inboxView(partition, minSeq), user, after, limit);
      return Response.json(200, JsonViews.inboxPage(user, page));
    }, null);
  }

  /** {@code GET /v1/users/{userId}/devices/{deviceId}/sync?limit&minSeq}: the inbox after the device's cursor. */
  Response sync(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    int limit = limit(request);
    OptionalLong minSeq = minSeq(request);
    return router.route("sync", INBOX_STORE, user, request, partition -> {
      long cursor = Timelines.cursor(cursorView(partition), user, device);
      Page<InboxEntry> page = Timelines.after(inboxView(partition, minSeq), user, cursor, limit);
      return Response.json(200, JsonViews.inboxPage(user, page));
    }, null);
  }

  /** {@code GET /v1/users/{userId}/devices/{deviceId}/cursor}: the committed cursor, -1 when none. */
  Response getCursor(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    return router.route("cursor-get", INBOX_STORE, user, request, partition -> Response.json(200,
        JsonViews.cursor(user, device, Timelines.cursor(cursorView(partition), user, device))), null);
  }

  /**
   * {@code PUT /v1/users/{userId}/devices/{deviceId}/cursor} with {@code {"seq"}}: publishes the commit to
   * {@code im.device-cursors} and answers 202. On the owner it also waits (briefly) until the store applied it,
   * so a sync right after the 202 starts after the new cursor. A cursor never moves back: a lower seq is a no-op.
   */
  Response putCursor(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    long seq = seqField(request.jsonObject());
    return router.route("cursor-put", INBOX_STORE, user, request, partition -> {
      StoreView<Long> cursors = cursorView(partition);
      if (Timelines.cursor(cursors, user, device) < seq) {
        publish(user, device, seq);
        awaitCursor(cursors, user, device, seq);
      }
      return Response.empty(202);
    }, () -> {
      // No owner reachable in time (rebalance): the commit is still durable once published; it applies later.
      publish(user, device, seq);
      return Response.empty(202);
    });
  }

  /** {@code GET /v1/conversations/{conversationId}/messages?before&limit&minSeq}: history, newest first. */
  Response history(Request request) {
    String conversation = request.path("conversationId");
    OptionalLong before = request.query("before").isPresent()
        ? OptionalLong.of(request.longQuery("before", 0, 0, Long.MAX_VALUE)) : OptionalLong.empty();
    int limit = limit(request);
    OptionalLong minSeq = minSeq(request);
    return router.route("history", TIMELINE_STORE, conversation, request, partition -> {
      StoreView<ChatMessage> view = minSeq.isPresent()
          ? InteractiveQueryView.atLeast(streams, TIMELINE_STORE, partition, topics.messages(), minSeq.getAsLong())
          : InteractiveQueryView.of(streams, TIMELINE_STORE, partition);
      Page<ChatMessage> page = Timelines.before(view, conversation, before, limit);
      return Response.json(200, JsonViews.historyPage(conversation, page));
    }, null);
  }

  private StoreView<InboxEntry> inboxView(int partition, OptionalLong minSeq) {
    return minSeq.isPresent()
        ? InteractiveQueryView.atLeast(streams, INBOX_STORE, partition, topics.inbox(), minSeq.getAsLong())
        : InteractiveQueryView.of(streams, INBOX_STORE, partition);
  }

  private StoreView<Long> cursorView(int partition) {
    return InteractiveQueryView.of(streams, CURSOR_STORE, partition);
  }

  private void publish(String user, String device, long seq) {
    DeviceCursor cursor = DeviceCursor.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq).build();
    try {
      cursorProducer.send(new ProducerRecord<>(topics.deviceCursors(), user, cursor))
          .get(Math.max(timeoutMs, 1_000), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new HttpError(503, "cursor not stored, retry: " + cause, Map.of("Retry-After",
          OwnerRouter.RETRY_AFTER_SECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HttpError(503, "interrupted", Map.of("Retry-After", OwnerRouter.RETRY_AFTER_SECONDS));
    }
  }

  /** Waits until the local store shows the cursor at {@code seq} or beyond; gives up quietly (it is durable). */
  private void awaitCursor(StoreView<Long> cursors, String user, String device, long seq) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    try {
      while (Timelines.cursor(cursors, user, device) < seq && System.nanoTime() < deadline) {
        Thread.sleep(CURSOR_POLL_MS);
      }
    } catch (NotServableException e) {
      // The partition moved away meanwhile: the new owner applies the commit from the topic.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static int limit(Request request) {
    return (int) request.longQuery("limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
  }

  private static OptionalLong minSeq(Request request) {
    return request.query("minSeq").isPresent()
        ? OptionalLong.of(request.longQuery("minSeq", 0, 0, Long.MAX_VALUE)) : OptionalLong.empty();
  }

  private static long seqField(JsonNode body) {
    JsonNode seq = body.get("seq");
    if (seq == null || !seq.isIntegralNumber() || !seq.canConvertToLong() || seq.asLong() < 0) {
      throw HttpError.badRequest("field 'seq' must be a whole number >= 0, got " + (seq == null ? "nothing" : seq));
    }
    return seq.asLong();
  }
}
