package dev.impipe.inbox.http;

import static dev.impipe.inbox.InboxStoreTopology.INBOX_STORE;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.edge.auth.Principal;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Json;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.http.Response;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a large group's timeline for the merged sync. {@code #groupId} is a key of {@code im.inbox} like any user,
 * so its partition (and owner) is usually not the syncing user's: the read goes through the same owner routing as
 * any request, as {@code GET /v1/users/%23groupId/inbox?after&limit&within}: answered from the local store when
 * this instance owns that partition, forwarded to the owner otherwise. Asynchronous: a read waiting for its
 * {@code groupMinSeq} (or an owner) holds no thread, and counts as one of the member's waiting requests.
 */
final class RoutedGroupTimelines {

  private static final Logger LOG = LoggerFactory.getLogger(RoutedGroupTimelines.class);

  /** Reads a group timeline from a partition of this instance (or throws NotServableException). */
  @FunctionalInterface
  interface LocalRead {
    Page<InboxEntry> read(int partition, String owner, long after, List<long[]> ranges, int limit,
        OptionalLong minSeq);
  }

  private final OwnerRouter router;
  private final LocalRead local;
  private final Principal caller;
  private final Map<String, Long> minSeqs;

  /**
   * @param caller the member whose sync reads the timelines: their token travels with every forwarded read
   * @param minSeqs per group id, the timeline offset its store must have applied before it answers
   */
  RoutedGroupTimelines(OwnerRouter router, LocalRead local, Principal caller, Map<String, Long> minSeqs) {
    this.router = router;
    this.local = local;
    this.caller = caller;
    this.minSeqs = Map.copyOf(minSeqs);
  }

  /**
   * Reads group {@code groupId}'s entries after {@code after} inside {@code intervals}, at most {@code limit}: the
   * timeline owner's answer, for {@link #page} (on a worker: the answer may complete on an event loop).
   */
  CompletableFuture<Response> fetch(String groupId, long after, ReadIntervals intervals, int limit) {
    String owner = Ids.groupTimeline(groupId);
    String ranges = intervals.ranges();
    String path = "/v1/users/" + URLEncoder.encode(owner, StandardCharsets.UTF_8) + "/inbox";
    // The owner of the timeline serves it only to an instance-signed sub-read (the router signs what it forwards):
    // the ranges come from the syncing member's own intervals, computed here.
    Long minSeq = minSeqs.get(groupId);
    String rawUri = path + "?after=" + after + "&limit=" + limit + "&within="
        + URLEncoder.encode(ranges, StandardCharsets.UTF_8) + (minSeq == null ? "" : "&minSeq=" + minSeq);
    Map<String, String> query = new HashMap<>(Map.of("after", Long.toString(after),
        "limit", Integer.toString(limit), "within", ranges));
    if (minSeq != null) {
      query.put("minSeq", Long.toString(minSeq));
    }
    Request request = new Request("GET", path, Map.of("userId", owner), Map.copyOf(query), Map.of(), new byte[0],
        rawUri, caller, OptionalLong.empty());
    List<long[]> parsed = ReadIntervals.parseRanges(ranges);
    OptionalLong bound = minSeq == null ? OptionalLong.empty() : OptionalLong.of(minSeq);
    return router.route("group-timeline", INBOX_STORE, owner, request, partition -> Response.json(200,
        JsonViews.inboxPage(owner, local.read(partition, owner, after, parsed, limit, bound))));
  }

  /** The page of a timeline answer; a refusal (429) passes on as it is, anything else but a 200 is a 503. */
  static Page<InboxEntry> page(String groupId, Response response) {
    String owner = Ids.groupTimeline(groupId);
    if (response.status() == 429) {
      throw new HttpError(429, errorText(response), Map.of("Retry-After",
          response.headers().getOrDefault("Retry-After", OwnerRouter.RETRY_AFTER_SECONDS)));
    }
    if (response.status() != 200) {
      LOG.debug("Timeline of group {} answered {}", groupId, response.status());
      throw OwnerRouter.unavailable();
    }
    try {
      JsonNode page = Json.MAPPER.readTree(response.body());
      List<Page.Entry<InboxEntry>> entries = new ArrayList<>();
      for (JsonNode e : page.get("entries")) {
        entries.add(new Page.Entry<>(e.get("seq").asLong(), JsonViews.inboxEntry(owner, e)));
      }
      return new Page<>(entries, page.get("next").asLong(), page.get("hasMore").asBoolean());
    } catch (IOException | RuntimeException e) {
      LOG.warn("Unreadable timeline page of group {}: {}", groupId, e.toString());
      throw OwnerRouter.unavailable();
    }
  }

  private static String errorText(Response response) {
    try {
      return Json.MAPPER.readTree(response.body()).path("error").asText("too many requests waiting, retry");
    } catch (IOException e) {
      return "too many requests waiting, retry";
    }
  }
}
