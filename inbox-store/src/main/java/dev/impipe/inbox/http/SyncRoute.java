package dev.impipe.inbox.http;

import static dev.impipe.inbox.InboxStoreTopology.INBOX_STORE;
import static dev.impipe.inbox.InboxStoreTopology.LARGE_GROUPS_STORE;

import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.query.InteractiveQueryView;
import dev.impipe.inbox.query.MergedSync;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.http.Response;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.streams.KafkaStreams;

/**
 * {@code GET /v1/users/{userId}/devices/{deviceId}/sync?limit&minSeq&after&groupMinSeq}: the inbox after the
 * device's cursor, merged with the timelines of the user's large groups after the device's positions in them (see
 * {@link MergedSync}); {@code cursor} is the vector to commit, {@code largeGroups} the user's large groups as read
 * ({@code groupId}, conversation seq {@code ranges}, {@code through}: the inbox seq of the newest membership
 * entry they reflect). {@code after} (a cursor a sync returned) starts after that vector instead of the committed
 * cursor (one of an inbox generation this instance does not serve: 409 with the cursor to resync from, see
 * {@link GenerationResync}); {@code groupMinSeq=g:offset,...} waits until group {@code g}'s timeline has applied
 * that offset (the push gateway reads what its reader may have passed before it listened to the group).
 *
 * <p>Asynchronous end to end: the user's own partition is read on a worker, then the group timelines are read
 * (each routed to its owner, each waiting without a thread for its {@code groupMinSeq}) and merged when all have
 * answered. A page holds at most {@code limit} entries and {@code IM_SYNC_MAX_RESPONSE_BYTES} of them.
 */
final class SyncRoute {

  private final KafkaStreams streams;
  private final OwnerRouter router;
  private final HttpApi http;
  private final InboxRoutes stores;
  private final long maxResponseBytes;

  SyncRoute(KafkaStreams streams, OwnerRouter router, HttpApi http, InboxRoutes stores, long maxResponseBytes) {
    this.streams = streams;
    this.http = http;
    this.router = router;
    this.stores = stores;
    this.maxResponseBytes = maxResponseBytes;
  }

  CompletableFuture<Response> sync(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    InboxRoutes.requireDevice(request.caller(), user, device);
    int limit = InboxRoutes.limit(request);
    OptionalLong minSeq = InboxRoutes.minSeq(request);
    SyncCursor after;
    try {
      after = request.query("after").map(SyncCursor::decode).orElse(null);
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("query parameter 'after' is not a cursor a sync returned");
    }
    if (after != null && after.generation() != stores.generation()) {
      return router.routeAsync("sync", INBOX_STORE, user, request,
          partition -> stores.resync(partition, user, device, after, request.caller()));
    }
    Map<String, Long> groupMinSeqs = groupMinSeqs(request);
    RoutedGroupTimelines timelines = new RoutedGroupTimelines(router, stores::readTimeline, request.caller(),
        groupMinSeqs);
    return router.routeAsync("sync", INBOX_STORE, user, request, partition -> {
      MergedSync.Plan plan = MergedSync.plan(stores.inboxView(partition, minSeq), stores.cursorView(partition),
          InteractiveQueryView.of(streams, LARGE_GROUPS_STORE, partition), user, device, after, limit,
          maxResponseBytes);
      List<MergedSync.Group> groups = plan.timelinesToRead();
      Map<String, CompletableFuture<Response>> reads = new LinkedHashMap<>();
      for (MergedSync.Group g : groups) {
        reads.put(g.groupId(), timelines.fetch(g.groupId(), g.position(), g.intervals(), limit));
      }
      if (reads.isEmpty()) {
        return CompletableFuture.completedFuture(merged(user, plan, Map.of(), limit));
      }
      // The last timeline may answer on an event loop: parse and merge on a worker.
      return CompletableFuture.allOf(reads.values().toArray(CompletableFuture[]::new))
          .thenCompose(v -> http.onWorker(() -> {
            Map<String, Page<InboxEntry>> pages = new LinkedHashMap<>();
            reads.forEach((group, read) -> pages.put(group, RoutedGroupTimelines.page(group, read.join())));
            return CompletableFuture.completedFuture(merged(user, plan, pages, limit));
          }));
    });
  }

  private Response merged(String user, MergedSync.Plan plan, Map<String, Page<InboxEntry>> pages, int limit) {
    return Response.json(200, JsonViews.syncPage(user, MergedSync.merge(plan, pages, limit, maxResponseBytes),
        stores.generation()));
  }

  /** {@code groupMinSeq=g:offset,h:offset} (group ids hold neither ':' nor ','); 400 when malformed. */
  static Map<String, Long> groupMinSeqs(Request request) {
    Optional<String> text = request.query("groupMinSeq");
    if (text.isEmpty() || text.get().isEmpty()) {
      return Map.of();
    }
    Map<String, Long> out = new LinkedHashMap<>();
    for (String part : text.get().split(",", -1)) {
      int colon = part.lastIndexOf(':');
      String group = colon < 0 ? "" : part.substring(0, colon);
      long offset;
      try {
        offset = colon < 0 ? -1 : Long.parseLong(part.substring(colon + 1));
      } catch (NumberFormatException e) {
        offset = -1;
      }
      if (!Ids.valid(group) || offset < 0) {
        throw HttpError.badRequest("query parameter 'groupMinSeq': '" + part + "' is not groupId:offset");
      }
      out.put(group, offset);
    }
    return out;
  }
}
