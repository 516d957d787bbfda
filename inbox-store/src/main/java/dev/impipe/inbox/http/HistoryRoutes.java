package dev.impipe.inbox.http;

import static dev.impipe.inbox.InboxStoreTopology.HISTORY_APPLIED_STORE;
import static dev.impipe.inbox.InboxStoreTopology.MEMBERSHIPS_STORE;
import static dev.impipe.inbox.InboxStoreTopology.TIMELINE_STORE;

import dev.impipe.avro.ChatMessage;
import dev.impipe.inbox.query.HistoryAccess;
import dev.impipe.inbox.query.HistoryApplied;
import dev.impipe.inbox.query.InteractiveQueryView;
import dev.impipe.inbox.query.JsonSize;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.Timelines;
import dev.impipe.edge.auth.Principal;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Json;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.http.Response;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.streams.KafkaStreams;

/**
 * The history endpoints: a conversation's messages, newest first, for its members only, and the access check they
 * route to the owner of the reader's partition.
 */
final class HistoryRoutes {

  private final KafkaStreams streams;
  private final OwnerRouter router;
  private final long maxResponseBytes;

  /** @param maxResponseBytes most bytes of messages in one page ({@code IM_SYNC_MAX_RESPONSE_BYTES}) */
  HistoryRoutes(KafkaStreams streams, OwnerRouter router, long maxResponseBytes) {
    this.streams = streams;
    this.router = router;
    this.maxResponseBytes = maxResponseBytes;
  }

  void register(HttpApi api) {
    api.routeAsync("GET", "/v1/conversations/{conversationId}/messages", this::history);
    api.routeAsync("GET", "/v1/users/{userId}/conversations/{conversationId}/access", this::access);
  }

  /**
   * {@code GET /v1/conversations/{conversationId}/messages?before&limit&minSeq}: history, newest first, for members
   * only: a direct conversation's two parties all of it, a group's current members from the conversation seq of
   * their last join (the user's membership view lives on the user's partition, the history on the conversation's:
   * two routed reads, each on its owner).
   */
  CompletableFuture<Response> history(Request request) {
    String conversation = request.path("conversationId");
    Principal caller = request.caller();
    requireMember(caller, conversation);
    OptionalLong before = request.query("before").isPresent()
        ? OptionalLong.of(request.longQuery("before", 0, 0, Long.MAX_VALUE)) : OptionalLong.empty();
    int limit = InboxRoutes.limit(request);
    OptionalLong minSeq = InboxRoutes.minSeq(request);
    CompletableFuture<Long> from = Ids.isDirect(conversation) ? CompletableFuture.completedFuture(0L)
        : router.route("history-access", MEMBERSHIPS_STORE, caller.userId(), accessRequest(caller, conversation),
            partition -> accessAnswer(partition, caller.userId(), conversation))
            .thenApply(HistoryRoutes::fromSeq);
    return from.thenCompose(fromSeq -> router.route("history", TIMELINE_STORE, conversation, request, partition -> {
      if (minSeq.isPresent()) {
        // minSeq is a conversation seq: wait until this partition's history has applied it (checked first).
        HistoryApplied.require(InteractiveQueryView.of(streams, HISTORY_APPLIED_STORE, partition),
            minSeq.getAsLong(), partition);
      }
      StoreView<ChatMessage> view = InteractiveQueryView.of(streams, TIMELINE_STORE, partition);
      Page<ChatMessage> page = Timelines.before(view, conversation, before, limit, fromSeq, JsonSize::message,
          maxResponseBytes);
      return Response.json(200, JsonViews.historyPage(conversation, page));
    }));
  }

  /**
   * {@code GET /v1/users/{userId}/conversations/{conversationId}/access}: from which conversation seq the user may
   * read the conversation's history ({@code {"fromSeq": n}}), 403 when not at all. A user asks only about
   * themselves; the history route asks it on the owner of the user's partition.
   */
  CompletableFuture<Response> access(Request request) {
    String user = request.path("userId");
    String conversation = request.path("conversationId");
    InboxRoutes.requireSelf(request.caller(), user);
    return router.route("history-access", MEMBERSHIPS_STORE, user, request,
        partition -> accessAnswer(partition, user, conversation));
  }

  private Response accessAnswer(int partition, String user, String conversation) {
    OptionalLong from = HistoryAccess.from(InteractiveQueryView.of(streams, MEMBERSHIPS_STORE, partition), user,
        conversation);
    if (from.isEmpty()) {
      throw HttpError.forbidden("only members read a conversation's history, from when they joined");
    }
    return Response.json(200, Map.of("userId", user, "conversationId", conversation, "fromSeq", from.getAsLong()));
  }

  private static Request accessRequest(Principal caller, String conversation) {
    String path = "/v1/users/" + URLEncoder.encode(caller.userId(), StandardCharsets.UTF_8) + "/conversations/"
        + URLEncoder.encode(conversation, StandardCharsets.UTF_8) + "/access";
    return new Request("GET", path, Map.of("userId", caller.userId(), "conversationId", conversation), Map.of(),
        Map.of(), new byte[0], path, caller, OptionalLong.empty());
  }

  private static long fromSeq(Response access) {
    if (access.status() == 403) {
      throw HttpError.forbidden("only members read a conversation's history, from when they joined");
    }
    if (access.status() != 200) {
      throw HttpError.unavailable("membership not available, retry", 1);
    }
    try {
      return Json.MAPPER.readTree(access.body()).get("fromSeq").asLong();
    } catch (java.io.IOException | RuntimeException e) {
      throw HttpError.unavailable("membership not available, retry", 1);
    }
  }

  private static void requireMember(Principal caller, String conversation) {
    if (Ids.isGroupTimeline(conversation)) {
      throw HttpError.forbidden("a group timeline is read through your device sync only");
    }
    if (conversation.startsWith("d:")) {
      String[] parties = conversation.split(":", -1);
      if (parties.length != 3 || !(caller.is(parties[1]) || caller.is(parties[2]))) {
        throw HttpError.forbidden("only the two parties read a direct conversation");
      }
    }
  }
}
