package dev.impipe.inbox.http;

import static dev.impipe.inbox.InboxStoreTopology.CURSOR_STORE;
import static dev.impipe.inbox.InboxStoreTopology.INBOX_STORE;
import static dev.impipe.inbox.InboxStoreTopology.LARGE_GROUPS_STORE;

import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.inbox.query.InteractiveQueryView;
import dev.impipe.inbox.query.JsonSize;
import dev.impipe.inbox.query.NotServableException;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.inbox.query.Timelines;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.http.Response;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.edge.auth.Principal;
import dev.impipe.runtime.domain.Ids;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sync, cursor and history endpoints of the HTTP API, answered from the stores of the owning instance.
 *
 * <p>Authorization (the caller is who the bearer token names): a user reads only their own inbox, devices and
 * cursors (a token with a {@code dev} claim: only that device's sync and cursor); a large group's timeline
 * {@code #groupId} is read only through the caller's merged sync (an instance-signed sub-read), never directly; a
 * conversation's history only by its members (see {@link HistoryRoutes}).
 */
public final class InboxRoutes {

  public static final int DEFAULT_LIMIT = 100;
  public static final int MAX_LIMIT = 1_000;

  private static final Logger LOG = LoggerFactory.getLogger(InboxRoutes.class);
  private static final long CURSOR_POLL_MS = 5;

  private final KafkaStreams streams;
  private final TopicNames topics;
  private final OwnerRouter router;
  private final HttpApi http;
  private final Producer<String, DeviceCursor> cursorProducer;
  private final long timeoutMs;
  private final long maxResponseBytes;
  private final SyncRoute syncRoute;
  private final HistoryRoutes historyRoutes;
  private final GenerationResync resyncs;

  /**
   * @param maxResponseBytes most bytes of entries in one page ({@code IM_SYNC_MAX_RESPONSE_BYTES})
   * @param admin reads the end offsets of the inbox's partitions, once each (see {@link #resync}): whether a store
   *     of a grown generation has applied every copied entry of a partition no new entry came to yet
   */
  public InboxRoutes(KafkaStreams streams, TopicNames topics, OwnerRouter router, HttpApi http,
      Producer<String, DeviceCursor> cursorProducer, long timeoutMs, long maxResponseBytes, Admin admin) {
    this.resyncs = new GenerationResync(streams, router, new InboxEnds(admin, streams, topics.inbox(), timeoutMs),
        topics.generation());
    this.streams = streams;
    this.topics = topics;
    this.router = router;
    this.http = http;
    this.cursorProducer = cursorProducer;
    this.timeoutMs = timeoutMs;
    this.maxResponseBytes = maxResponseBytes;
    this.syncRoute = new SyncRoute(streams, router, http, this, maxResponseBytes);
    this.historyRoutes = new HistoryRoutes(streams, router, maxResponseBytes);
  }

  public void register(HttpApi api) {
    api.routeAsync("GET", "/v1/users/{userId}/inbox", this::inbox);
    api.routeAsync("GET", "/v1/users/{userId}/devices/{deviceId}/sync", syncRoute::sync);
    api.routeAsync("GET", "/v1/users/{userId}/devices/{deviceId}/cursor", this::getCursor);
    api.routeAsync("PUT", "/v1/users/{userId}/devices/{deviceId}/cursor", this::putCursor);
    historyRoutes.register(api);
  }

  /**
   * {@code GET /v1/users/{userId}/inbox?after&limit&minSeq&within}: entries with seq > after, ascending. With
   * {@code within=from-to,from-...} (conversation seq ranges, used on group timelines {@code #groupId} by the merged
   * sync of another instance) only entries whose conversation seq lies in a range. With {@code copyOf&generation}
   * (on a group timeline, by the resync of another instance): where a position of the previous generation was
   * copied to, see {@link GenerationResync}.
   */
  CompletableFuture<Response> inbox(Request request) {
    String user = request.path("userId");
    if (Ids.isGroupTimeline(user)) {
      // Only an instance reading it for a member's merged sync (signed sub-read) gets a group timeline.
      if (!request.forwarded()) {
        throw HttpError.forbidden("a group timeline is read through your device sync only");
      }
    } else {
      requireSelf(request.caller(), user);
    }
    if (request.query("copyOf").isPresent()) {
      return resyncs.copyOf(request, user);
    }
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
      Page<InboxEntry> page = within == null
          ? Timelines.after(view, user, after, limit, JsonSize::entry, maxResponseBytes)
          : Timelines.within(view, user, after, within, limit, maxResponseBytes);
      return Response.json(200, JsonViews.inboxPage(user, page));
    });
  }

  /** {@code GET /v1/users/{userId}/devices/{deviceId}/cursor}: the committed cursor, -1 when none. */
  CompletableFuture<Response> getCursor(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    requireDevice(request.caller(), user, device);
    return router.route("cursor-get", INBOX_STORE, user, request, partition -> Response.json(200,
        JsonViews.cursor(user, device, Timelines.cursor(cursorView(partition), user, device))));
  }

  /**
   * {@code PUT /v1/users/{userId}/devices/{deviceId}/cursor} with {@code {"seq"}} (the inbox seq) or
   * {@code {"cursor"}} (the vector a merged sync returned; one of another inbox generation is answered 409 with the
   * cursor to resync from, see {@link GenerationResync}; a bare seq is read in the serving generation). On the owner
   * of the user's partition: a component above
   * what the user's inbox holds, or a position in a group the user does not read as a large group, is refused
   * (409); each component that moved forward is published to {@code im.device-cursors} (a group position under
   * device id {@code <deviceId>#<groupId>}), and the answer (202) waits until the store applied them, so a sync
   * right after it starts after the new cursor. No component ever moves back: a lower value is a no-op. When no
   * owner can be reached the answer is 503: nothing is published blindly.
   */
  CompletableFuture<Response> putCursor(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    requireDevice(request.caller(), user, device);
    SyncCursor wanted = cursorBody(request.jsonBody(CursorBody.class), generation());
    Map<String, Long> components = wanted.components(device);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(router.budgetMs(request));
    // Set when this instance answered as the owner: its publish, to wait for before the 202 goes out.
    AtomicReference<CompletableFuture<Void>> applied = new AtomicReference<>();
    return router.routeAsync("cursor-put", INBOX_STORE, user, request, partition -> {
      if (wanted.generation() != generation()) {
        return resync(partition, user, device, wanted, request.caller());
      }
      StoreView<Long> cursors = cursorView(partition);
      checkWithinInbox(partition, user, wanted);
      Map<String, Long> forward = new LinkedHashMap<>();
      components.forEach((d, seq) -> {
        if (Timelines.cursor(cursors, user, d) < seq) {
          forward.put(d, seq);
        }
      });
      applied.set(publish(user, forward).thenCompose(v -> awaitApplied(partition, user, forward, deadline)));
      return CompletableFuture.completedFuture(Response.empty(202));
    }).thenCompose(response -> applied.get() == null ? CompletableFuture.completedFuture(response)
        : applied.get().thenApply(v -> response));
  }

  static void requireSelf(Principal caller, String user) {
    if (!caller.is(user)) {
      throw HttpError.forbidden("you may only read your own inbox, devices and cursors");
    }
  }

  /**
   * The caller is {@code user} (and, with a device token, {@code device}); the device id is valid (400 otherwise):
   * a device id never holds {@code #}, which the cursor store uses for a device's large-group positions.
   */
  static void requireDevice(Principal caller, String user, String device) {
    requireSelf(caller, user);
    if (!Ids.valid(device)) {
      throw HttpError.badRequest("device id must be 1-" + Ids.MAX_LENGTH + " letters, digits or . _ - @");
    }
    if (caller.deviceId().isPresent() && !caller.deviceId().get().equals(device)) {
      throw HttpError.forbidden("this token is for device " + caller.deviceId().get() + ", not " + device);
    }
  }

  /** 409 unless every component of {@code wanted} lies within what the user's inbox and large groups hold. */
  private void checkWithinInbox(int partition, String user, SyncCursor wanted) {
    Page<InboxEntry> newest = Timelines.before(inboxView(partition, OptionalLong.empty()), user,
        OptionalLong.empty(), 1);
    long end = newest.entries().isEmpty() ? Timelines.START : newest.entries().get(0).seq();
    if (wanted.inbox() > end) {
      throw new HttpError(409, "cursor " + wanted.inbox() + " is beyond the newest entry of your inbox (" + end
          + ")");
    }
    StoreView<byte[]> largeGroups = InteractiveQueryView.of(streams, LARGE_GROUPS_STORE, partition);
    for (String group : wanted.groups().keySet()) {
      if (largeGroups.get(StoreKeys.userGroup(user, group)).isEmpty()) {
        throw new HttpError(409, "the cursor names group " + group + ", which you do not read as a large group");
      }
    }
  }

  /** A group timeline's entries within {@code ranges}, from a partition of this instance (a merged sync's read). */
  Page<InboxEntry> readTimeline(int partition, String owner, long after, List<long[]> ranges, int limit,
      OptionalLong minSeq) {
    return Timelines.within(inboxView(partition, minSeq), owner, after, ranges, limit, maxResponseBytes);
  }

  StoreView<InboxEntry> inboxView(int partition, OptionalLong minSeq) {
    return minSeq.isPresent()
        ? InteractiveQueryView.atLeast(streams, INBOX_STORE, partition, topics.inbox(), minSeq.getAsLong())
        : InteractiveQueryView.of(streams, INBOX_STORE, partition);
  }

  StoreView<Long> cursorView(int partition) {
    return InteractiveQueryView.of(streams, CURSOR_STORE, partition);
  }

  /** Publishes the components; completes when Kafka acknowledged all of them, fails with a 503 otherwise. */
  private CompletableFuture<Void> publish(String user, Map<String, Long> components) {
    List<CompletableFuture<Void>> sent = new ArrayList<>();
    components.forEach((device, seq) -> {
      CompletableFuture<Void> acked = new CompletableFuture<>();
      try {
        cursorProducer.send(new ProducerRecord<>(topics.deviceCursors(), user,
            DeviceCursor.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq).build()), (md, e) -> {
              if (e != null) {
                acked.completeExceptionally(e);
              } else {
                acked.complete(null);
              }
            });
      } catch (RuntimeException e) {
        acked.completeExceptionally(e);
      }
      sent.add(acked);
    });
    return CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new))
        .orTimeout(Math.max(timeoutMs, 1_000), TimeUnit.MILLISECONDS)
        .exceptionallyCompose(e -> {
          LOG.warn("Cursor commit for {} not stored: {}", user, e.toString());
          return CompletableFuture.failedFuture(HttpError.unavailable("cursor not stored, retry", 1));
        });
  }

  /**
   * Completes once this instance's store shows every component (polled on a timer, no thread held), or quietly at
   * the deadline: the commit is durable in Kafka either way.
   */
  private CompletableFuture<Void> awaitApplied(int partition, String user, Map<String, Long> forward,
      long deadline) {
    return http.onWorker(() -> {
      boolean applied;
      try {
        StoreView<Long> cursors = cursorView(partition);
        applied =
            forward.entrySet().stream().allMatch(e -> Timelines.cursor(cursors, user, e.getKey()) >= e.getValue());
      } catch (NotServableException e) {
        applied = true; // the partition moved away meanwhile: the new owner applies the commit from the topic
      }
      if (applied || System.nanoTime() >= deadline) {
        return CompletableFuture.completedFuture(null);
      }
      return http.after(CURSOR_POLL_MS).thenCompose(v -> awaitApplied(partition, user, forward, deadline));
    });
  }

  static int limit(Request request) {
    return (int) request.longQuery("limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
  }

  static OptionalLong minSeq(Request request) {
    return request.query("minSeq").isPresent()
        ? OptionalLong.of(request.longQuery("minSeq", 0, 0, Long.MAX_VALUE)) : OptionalLong.empty();
  }

  /** The body of {@code PUT .../cursor}: {@code seq}, or {@code cursor} (which wins when both are given). */
  record CursorBody(String cursor, Long seq) {}

  static SyncCursor cursorBody(CursorBody body) {
    return cursorBody(body, 0);
  }

  /** The cursor of the body; a bare {@code seq} is read in {@code generation}. */
  static SyncCursor cursorBody(CursorBody body, int generation) {
    if (body.cursor() != null) {
      try {
        return SyncCursor.decode(body.cursor());
      } catch (IllegalArgumentException e) {
        throw HttpError.badRequest("field 'cursor' is not a cursor a sync returned");
      }
    }
    if (body.seq() == null || body.seq() < 0) {
      throw HttpError.badRequest("field 'seq' must be a whole number >= 0, got "
          + (body.seq() == null ? "nothing" : body.seq()));
    }
    return SyncCursor.of(body.seq(), Map.of()).inGeneration(generation);
  }

  /** The inbox generation this instance serves ({@code IM_INBOX_GENERATION}): sync cursors are of it. */
  int generation() {
    return topics.generation();
  }

  /**
   * The answer to {@code given}, a cursor of another inbox generation, on the owner of {@code user}'s partition (see
   * {@link GenerationResync}): 409 with the cursor to resync from, or 503 with {@code Retry-After} while a copy is
   * not applied up to it.
   */
  CompletableFuture<Response> resync(int partition, String user, String device, SyncCursor given, Principal caller) {
    return resyncs.answer(partition, user, device, given, caller);
  }

}
