package dev.impipe.inbox.http;

import static dev.impipe.inbox.InboxStoreTopology.CURSOR_STORE;
import static dev.impipe.inbox.InboxStoreTopology.INBOX_STORE;
import static dev.impipe.inbox.InboxStoreTopology.LARGE_GROUPS_STORE;
import static dev.impipe.inbox.InboxStoreTopology.TIMELINE_STORE;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.internal.ReadIntervals;
import dev.impipe.inbox.query.InteractiveQueryView;
import dev.impipe.inbox.query.MergedSync;
import dev.impipe.inbox.query.NotServableException;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.inbox.query.Timelines;
import dev.impipe.runtime.http.HttpApi;
import dev.impipe.runtime.http.HttpError;
import dev.impipe.runtime.http.Request;
import dev.impipe.runtime.http.Response;
import dev.impipe.runtime.topics.TopicNames;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
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
  private final MergedSync.GroupSource groupTimelines;

  public InboxRoutes(KafkaStreams streams, TopicNames topics, OwnerRouter router,
      Producer<String, DeviceCursor> cursorProducer, long timeoutMs) {
    this.streams = streams;
    this.groupTimelines = new RoutedGroupTimelines(router, (partition, owner, after, ranges, limit) ->
        Timelines.within(inboxView(partition, OptionalLong.empty()), owner, after, ranges, limit));
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

  /**
   * {@code GET /v1/users/{userId}/inbox?after&limit&minSeq&within}: entries with seq > after, ascending. With
   * {@code within=from-to,from-...} (conversation seq ranges, used on group timelines {@code #groupId} by the merged
   * sync of another instance) only entries whose conversation seq lies in a range.
   */
  Response inbox(Request request) {
    String user = request.path("userId");
    long after = request.longQuery("after", Timelines.START, Timelines.START, Long.MAX_VALUE);
    int limit = limit(request);
    OptionalLong minSeq = minSeq(request);
    List<long[]> within;
    try {
      within = request.query("within").map(ReadIntervals::parseRanges).orElse(null);
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("query parameter 'within': " + e.getMessage());
    }
    return router.route("inbox", INBOX_STORE, user, request, partition -> {
      StoreView<InboxEntry> view = inboxView(partition, minSeq);
      Page<InboxEntry> page = within == null ? Timelines.after(view, user, after, limit)
          : Timelines.within(view, user, after, within, limit);
      return Response.json(200, JsonViews.inboxPage(user, page));
    }, null);
  }

  /**
   * {@code GET /v1/users/{userId}/devices/{deviceId}/sync?limit&minSeq}: the inbox after the device's cursor,
   * merged with the timelines of the user's large groups after the device's positions in them (see
   * {@link MergedSync}); {@code cursor} is the vector to commit.
   */
  Response sync(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    int limit = limit(request);
    OptionalLong minSeq = minSeq(request);
    return router.route("sync", INBOX_STORE, user, request, partition -> {
      MergedSync.SyncPage merged = MergedSync.sync(inboxView(partition, minSeq), cursorView(partition),
          InteractiveQueryView.of(streams, LARGE_GROUPS_STORE, partition), user, device, limit, groupTimelines);
      return Response.json(200, JsonViews.syncPage(user, merged));
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
   * {@code PUT /v1/users/{userId}/devices/{deviceId}/cursor} with {@code {"seq"}} (the inbox seq) or
   * {@code {"cursor"}} (the vector a merged sync returned): publishes each component that moved forward to
   * {@code im.device-cursors} (a group position under device id {@code <deviceId>#<groupId>}) and answers 202. On
   * the owner it also waits (briefly) until the store applied them, so a sync right after the 202 starts after the
   * new cursor. No component ever moves back: a lower value is a no-op.
   */
  Response putCursor(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    SyncCursor wanted = cursorBody(request.jsonObject());
    Map<String, Long> components = wanted.components(device);
    return router.route("cursor-put", INBOX_STORE, user, request, partition -> {
      StoreView<Long> cursors = cursorView(partition);
      Map<String, Long> forward = new LinkedHashMap<>();
      components.forEach((d, seq) -> {
        if (Timelines.cursor(cursors, user, d) < seq) {
          forward.put(d, seq);
        }
      });
      publish(user, forward);
      // One wait for all components: a vector commit takes no longer than a single one.
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
      forward.forEach((d, seq) -> awaitCursor(cursors, user, d, seq, deadline));
      return Response.empty(202);
    }, () -> {
      // No owner reachable in time (rebalance): the commit is still durable once published; it applies later.
      publish(user, components);
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

  private void publish(String user, Map<String, Long> components) {
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    components.forEach((device, seq) -> sent.add(cursorProducer.send(new ProducerRecord<>(topics.deviceCursors(),
        user, DeviceCursor.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq).build()))));
    try {
      for (Future<RecordMetadata> f : sent) {
        f.get(Math.max(timeoutMs, 1_000), TimeUnit.MILLISECONDS);
      }
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
  private void awaitCursor(StoreView<Long> cursors, String user, String device, long seq, long deadline) {
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

  /** {@code {"seq": n}} (inbox only) or {@code {"cursor": "<opaque>"}}; 400 otherwise. */
  private static SyncCursor cursorBody(JsonNode body) {
    JsonNode opaque = body.get("cursor");
    if (opaque != null && !opaque.isNull()) {
      if (!opaque.isTextual()) {
        throw HttpError.badRequest("field 'cursor' must be the string a sync returned");
      }
      try {
        return SyncCursor.decode(opaque.asText());
      } catch (IllegalArgumentException e) {
        throw HttpError.badRequest("field 'cursor' is not a cursor a sync returned");
      }
    }
    JsonNode seq = body.get("seq");
    if (seq == null || !seq.isIntegralNumber() || !seq.canConvertToLong() || seq.asLong() < 0) {
      throw HttpError.badRequest("field 'seq' must be a whole number >= 0, got " + (seq == null ? "nothing" : seq));
    }
    return SyncCursor.of(seq.asLong(), Map.of());
  }
}
