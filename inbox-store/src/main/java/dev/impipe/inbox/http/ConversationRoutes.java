package dev.impipe.inbox.http;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.inbox.conversations.ConversationJson;
import dev.impipe.inbox.conversations.ConversationKeys;
import dev.impipe.inbox.conversations.ConversationList;
import dev.impipe.inbox.conversations.ConversationOrderCache;
import dev.impipe.inbox.conversations.ConversationOrders;
import dev.impipe.inbox.conversations.ConversationTopology;
import dev.impipe.inbox.conversations.ConversationsConfig;
import dev.impipe.inbox.conversations.LargeGroupCounts;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.inbox.query.InteractiveQueryView;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.edge.app.ComponentContext;
import dev.impipe.runtime.app.RequestProducers;
import dev.impipe.edge.auth.Principal;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Json;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.http.Response;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The conversation list endpoints. Only the user reads or changes their own list (403 otherwise). The list is
 * answered by the owner of the user's partition (routed like sync); a settings change is an inbox entry
 * {@code CONVERSATION_SETTINGS} of the user, published from any instance: the list applies it like any entry and
 * the user's devices receive it like any entry.
 */
public final class ConversationRoutes {

  private static final Logger LOG = LoggerFactory.getLogger(ConversationRoutes.class);

  private final KafkaStreams streams;
  private final String inboxTopic;
  private final OwnerRouter router;
  private final Producer<String, InboxEntry> producer;
  private final ConversationsConfig cfg;
  private final long timeoutMs;
  private final HttpApi http;
  private final ConversationOrders orders;

  /** {@code orders}: the list orders the topology's processors keep (pages read from them). */
  public ConversationRoutes(KafkaStreams streams, String inboxTopic, OwnerRouter router,
      Producer<String, InboxEntry> producer, ConversationsConfig cfg, long timeoutMs, HttpApi http,
      ConversationOrders orders) {
    this.orders = orders;
    this.http = http;
    this.streams = streams;
    this.inboxTopic = inboxTopic;
    this.router = router;
    this.producer = producer;
    this.cfg = cfg;
    this.timeoutMs = timeoutMs;
  }

  /** The answer of the list's routes when {@code IM_CONVERSATIONS_ENABLED=false} (404). */
  static final String DISABLED = "the conversation list is disabled";

  /**
   * Creates the settings producer (closed on shutdown) and registers the routes on the context's server; with the
   * list disabled, routes that answer 404 {@value #DISABLED} (no producer). {@code orders}: those the streams'
   * topology keeps ({@link ConversationOrders#NONE} if none).
   */
  public static void start(ComponentContext context, KafkaStreams streams, OwnerRouter router, long timeoutMs,
      ConversationOrders orders) {
    ConversationsConfig cfg = ConversationsConfig.fromEnv(context.env());
    if (!cfg.enabled()) {
      registerDisabled(context.http());
      return;
    }
    var inbox = context.topics().inbox();
    KafkaProducer<String, InboxEntry> producer = RequestProducers.create(context, inbox,
        "inbox-store-conversation-settings", timeoutMs);
    new ConversationRoutes(streams, inbox.name(), router, producer, cfg, timeoutMs, context.http(), orders)
        .register(context.http());
  }

  /** The list's routes, each answering 404 {@value #DISABLED}. */
  static void registerDisabled(HttpApi api) {
    api.routeAsync("GET", "/v1/users/{userId}/conversations", ConversationRoutes::disabled);
    api.routeAsync("PUT", "/v1/users/{userId}/conversations/{conversationId}/settings", ConversationRoutes::disabled);
  }

  static CompletableFuture<Response> disabled(Request request) {
    throw new HttpError(404, DISABLED);
  }

  public void register(HttpApi api) {
    api.routeAsync("GET", "/v1/users/{userId}/conversations", this::list);
    api.routeAsync("PUT", "/v1/users/{userId}/conversations/{conversationId}/settings", this::settings);
  }

  /** {@code GET /v1/users/{userId}/conversations?limit&after&minSeq}: one page of the list. */
  CompletableFuture<Response> list(Request request) {
    String user = request.path("userId");
    if (Ids.isGroupTimeline(user)) {
      return largeGroupSummary(request, user);
    }
    requireSelf(request.caller(), user, "read");
    int limit = (int) request.longQuery("limit", cfg.defaultLimit(), 1, cfg.maxLimit());
    Optional<String> after = request.query("after");
    if (after.isPresent()) {
      try {
        ConversationKeys.positionOf(after.get());
      } catch (IllegalArgumentException e) {
        throw HttpError.badRequest("query parameter 'after' is not a cursor a list returned");
      }
    }
    Optional<Long> minSeq = request.query("minSeq").isPresent()
        ? Optional.of(request.longQuery("minSeq", 0, 0, Long.MAX_VALUE)) : Optional.empty();
    return router.routeAsync("conversations", ConversationTopology.STATES_STORE, user, request, partition -> {
      if (minSeq.isPresent()) {
        // The list is written before the inbox store (first child of the source): the inbox store's position
        // bounds both. Throws BEHIND (retried by the router) until it has applied minSeq.
        InteractiveQueryView.atLeast(streams, InboxStoreTopology.INBOX_STORE, partition, inboxTopic, minSeq.get())
            .get(StoreKeys.owner(user));
      }
      StoreView<byte[]> states = InteractiveQueryView.of(streams, ConversationTopology.STATES_STORE, partition);
      StoreView<byte[]> largeGroups = InteractiveQueryView.of(streams, InboxStoreTopology.LARGE_GROUPS_STORE,
          partition);
      // First pass: which large groups' timelines the page needs. Their summaries are read asynchronously (a
      // timeline may live on another instance), so no worker waits; the page is then built again with them.
      Map<String, CompletableFuture<Response>> reads = new LinkedHashMap<>();
      // The order this partition's task keeps (none while it is not active here: every state is read).
      ConversationOrderCache order = orders.of(partition);
      ConversationList.ListPage first = ConversationList.page(states, largeGroups,
          (group, reader, ranges, readUpTo) -> {
            reads.put(group, fetchSummary(request, group, reader, ranges, readUpTo));
            return LargeGroupCounts.Summary.NONE;
          }, order, user, after, limit);
      if (reads.isEmpty()) {
        return CompletableFuture.completedFuture(Response.json(200, ConversationJson.list(user, first)));
      }
      // The last summary may answer on an event loop: build the page on a worker.
      return CompletableFuture.allOf(reads.values().toArray(CompletableFuture[]::new))
          .thenCompose(v -> http.onWorker(() -> {
            Map<String, LargeGroupCounts.Summary> summaries = new HashMap<>();
            reads.forEach((group, read) -> summaries.put(group, summary(read.join())));
            return CompletableFuture.completedFuture(Response.json(200, ConversationJson.list(user,
                ConversationList.page(states, largeGroups,
                    (group, reader, ranges, readUpTo) -> summaries.getOrDefault(group, LargeGroupCounts.Summary.NONE),
                    order, user, after, limit))));
          }));
    });
  }

  /**
   * A member's list asks the owner of a large group's timeline for its summary, as {@code GET
   * /v1/users/%23groupId/conversations?reader&within&above} (routed like the merged sync's timeline reads: local
   * when this instance owns the timeline's partition, else forwarded with the member's token, instance-signed).
   */
  private CompletableFuture<Response> fetchSummary(Request member, String group, String reader, List<long[]> ranges,
      long readUpTo) {
    String owner = Ids.groupTimeline(group);
    String within = rangesText(ranges);
    String path = "/v1/users/" + URLEncoder.encode(owner, StandardCharsets.UTF_8) + "/conversations";
    String rawUri = path + "?reader=" + URLEncoder.encode(reader, StandardCharsets.UTF_8) + "&within="
        + URLEncoder.encode(within, StandardCharsets.UTF_8) + "&above=" + readUpTo;
    Request sub = new Request("GET", path, Map.of("userId", owner), Map.of("reader", reader, "within", within,
        "above", Long.toString(readUpTo)), Map.of(), new byte[0], rawUri, member.caller(), OptionalLong.empty());
    return router.route("conversations-large-group", ConversationTopology.STATES_STORE, owner, sub,
        partition -> Response.json(200, ConversationJson.summary(summaryOn(partition, owner, group, reader, ranges,
            readUpTo))));
  }

  /** A timeline owner's answer as a summary; anything but a readable 200 is a generic 503 (no internal detail). */
  private static LargeGroupCounts.Summary summary(Response response) {
    if (response.status() != 200) {
      throw new HttpError(503, "not ready, retry", Map.of("Retry-After", OwnerRouter.RETRY_AFTER_SECONDS));
    }
    try {
      return ConversationJson.summary(Json.MAPPER.readTree(response.body()));
    } catch (java.io.IOException | RuntimeException e) {
      LOG.warn("unreadable large-group summary: {}", e.toString());
      throw new HttpError(503, "not ready, retry", Map.of("Retry-After", OwnerRouter.RETRY_AFTER_SECONDS));
    }
  }

  /** The owner of {@code #groupId}: answers a member's list, only to an instance-signed sub-read. */
  private CompletableFuture<Response> largeGroupSummary(Request request, String owner) {
    if (!request.forwarded()) {
      throw HttpError.forbidden("a group timeline is read through your own conversation list only");
    }
    String group = owner.substring(Ids.GROUP_TIMELINE_PREFIX.length());
    String reader = request.query("reader").orElseThrow(() -> HttpError.badRequest("'reader' is required"));
    long above = request.longQuery("above", -1, -1, Long.MAX_VALUE);
    List<long[]> ranges;
    try {
      ranges = ReadIntervals.parseRanges(request.query("within").orElse(""));
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("query parameter 'within': " + e.getMessage());
    }
    return router.route("conversations-large-group", ConversationTopology.STATES_STORE, owner, request,
        partition -> Response.json(200, ConversationJson.summary(summaryOn(partition, owner, group, reader, ranges,
            above))));
  }

  private LargeGroupCounts.Summary summaryOn(int partition, String owner, String group, String reader,
      List<long[]> ranges, long readUpTo) {
    return LargeGroupCounts.read(InteractiveQueryView.of(streams, ConversationTopology.STATES_STORE, partition),
        InteractiveQueryView.of(streams, InboxStoreTopology.INBOX_STORE, partition), group, reader, ranges, readUpTo,
        cfg.largeUnreadMax());
  }

  /** {@code from-to,from-} as {@link ReadIntervals#ranges()} writes it. */
  public static String rangesText(List<long[]> ranges) {
    StringBuilder sb = new StringBuilder();
    for (long[] r : ranges) {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append(r[0]).append('-');
      if (r[1] != Long.MAX_VALUE) {
        sb.append(r[1]);
      }
    }
    return sb.toString();
  }

  /** The body of {@code PUT .../settings}: each flag optional, at least one. */
  record SettingsBody(Boolean muted, Boolean pinned) {}

  /**
   * {@code PUT /v1/users/{userId}/conversations/{conversationId}/settings} {@code {"muted"?, "pinned"?}}: 202
   * {@code {"userId", "conversationId", "seq"}} once Kafka has the entry ({@code seq}: its inbox seq, for
   * {@code minSeq}); 503 with {@code Retry-After} when it does not within the query timeout.
   */
  CompletableFuture<Response> settings(Request request) {
    String user = request.path("userId");
    String conversation = request.path("conversationId");
    requireSelf(request.caller(), user, "change");
    String invalid = invalidConversation(user, conversation);
    if (invalid != null) {
      throw HttpError.badRequest(invalid);
    }
    SettingsBody body = request.jsonBody(SettingsBody.class);
    if (body.muted() == null && body.pinned() == null) {
      throw HttpError.badRequest("give 'muted' or 'pinned' (true or false)");
    }
    InboxEntry entry = InboxEntry.newBuilder().setUserId(user).setType(InboxEntryType.CONVERSATION_SETTINGS)
        .setConversationId(conversation).setConversationSeq(-1).setTimestamp(Instant.now())
        .setMuted(body.muted()).setPinned(body.pinned()).build();
    CompletableFuture<Long> sent = new CompletableFuture<>();
    try {
      producer.send(new ProducerRecord<>(inboxTopic, user, entry), (md, e) -> {
        if (e != null) {
          sent.completeExceptionally(e);
        } else {
          sent.complete(md.offset());
        }
      });
    } catch (RuntimeException e) {
      sent.completeExceptionally(e);
    }
    return sent.orTimeout(Math.max(timeoutMs, 1_000), TimeUnit.MILLISECONDS).handle((seq, e) -> {
      if (e != null) {
        LOG.warn("Conversation settings of {} not stored: {}", user, e.toString());
        throw HttpError.unavailable("settings not stored, retry", 1);
      }
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("userId", user);
      json.put("conversationId", conversation);
      json.put("seq", seq);
      return Response.json(202, json);
    });
  }

  /** Why {@code conversation} cannot be one of {@code user}'s conversations, or null when it can. */
  public static String invalidConversation(String user, String conversation) {
    if (Ids.isDirect(conversation)) {
      String[] parties = conversation.split(":", -1);
      if (parties.length != 3 || !Ids.valid(parties[1]) || !Ids.valid(parties[2])
          || !Ids.direct(parties[1], parties[2]).equals(conversation)) {
        return "'" + conversation + "' is not a direct conversation id (d:<a>:<b>, the two user ids sorted)";
      }
      if (!parties[1].equals(user) && !parties[2].equals(user)) {
        return "you are not a party of " + conversation;
      }
      return null;
    }
    return Ids.valid(conversation) ? null : "'" + conversation + "' is not a conversation id";
  }

  private static void requireSelf(Principal caller, String user, String verb) {
    if (!caller.is(user)) {
      throw HttpError.forbidden("you may only " + verb + " your own conversation list");
    }
  }
}
