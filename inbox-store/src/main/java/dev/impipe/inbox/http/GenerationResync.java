package dev.impipe.inbox.http;

import static dev.impipe.inbox.InboxStoreTopology.COPY_APPLIED_STORE;
import static dev.impipe.inbox.InboxStoreTopology.COPY_INDEX_STORE;
import static dev.impipe.inbox.InboxStoreTopology.CURSOR_STORE;
import static dev.impipe.inbox.InboxStoreTopology.INBOX_STORE;
import static dev.impipe.inbox.InboxStoreTopology.LARGE_GROUPS_STORE;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.edge.auth.Principal;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Json;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.http.Response;
import dev.impipe.inbox.query.CopiedSeqs;
import dev.impipe.inbox.query.GenerationGate;
import dev.impipe.inbox.query.InteractiveQueryView;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.runtime.domain.Ids;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The answer to a sync or cursor commit with a cursor of another inbox generation (see {@link GenerationGate}), on
 * the owner of the user's partition: the inbox seq is translated through this partition's copy index, each
 * large-group position through the copy index of the partition owning the group's timeline {@code #groupId}, read
 * like the merged sync reads a timeline ({@link RoutedGroupTimelines}): locally when this instance owns it, else a
 * routed, instance-signed sub-read {@code GET /v1/users/%23groupId/inbox?copyOf=P&generation=G} of its owner,
 * answered {@code {"seq": n}} (n = -1: below every copied entry) or {@code {"seq": null}} while the copy is not
 * applied up to P there. Asynchronous: waiting for those sub-reads holds no thread.
 */
final class GenerationResync {

  private static final Logger LOG = LoggerFactory.getLogger(GenerationResync.class);

  private final KafkaStreams streams;
  private final OwnerRouter router;
  private final InboxEnds inboxEnds;
  private final int generation;

  GenerationResync(KafkaStreams streams, OwnerRouter router, InboxEnds inboxEnds, int generation) {
    this.streams = streams;
    this.router = router;
    this.inboxEnds = inboxEnds;
    this.generation = generation;
  }

  /**
   * The answer to {@code given} (not of this generation) from {@code user}'s {@code device}, on {@code partition}
   * (the user's, of this instance: throws {@code NotServableException} at once otherwise): 409 with the cursor to
   * resync from, or 503 with {@code Retry-After} while a copy is not applied up to a part of it.
   *
   * @param caller whose token travels with the group sub-reads forwarded to other instances
   */
  CompletableFuture<Response> answer(int partition, String user, String device, SyncCursor given, Principal caller) {
    CopiedSeqs copies = copies(partition);
    StoreView<byte[]> largeGroups = InteractiveQueryView.of(streams, LARGE_GROUPS_STORE, partition);
    StoreView<Long> cursors = InteractiveQueryView.of(streams, CURSOR_STORE, partition);
    if (given.generation() != generation - 1) {
      return CompletableFuture.completedFuture(respond(GenerationGate.answer(given, generation, user, copies,
          () -> GenerationGate.committed(cursors, largeGroups, user, device, generation)).orElseThrow()));
    }
    OptionalLong inbox = GenerationGate.translate(copies, user, given.generation(), given.inbox());
    Map<String, Long> sent = GenerationGate.groupsToTranslate(given, generation,
        GenerationGate.largeGroups(largeGroups, user));
    if (inbox.isEmpty() || sent.isEmpty()) {
      return CompletableFuture.completedFuture(respond(GenerationGate.answer(given, generation, inbox, Map.of(),
          inbox.isEmpty() ? null : GenerationGate.committed(cursors, largeGroups, user, device, generation))));
    }
    SyncCursor committed = GenerationGate.committed(cursors, largeGroups, user, device, generation);
    Map<String, CompletableFuture<Response>> reads = new LinkedHashMap<>();
    sent.forEach((group, position) -> reads.put(group, fetchCopy(group, given.generation(), position, caller)));
    return CompletableFuture.allOf(reads.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
      Map<String, OptionalLong> groups = new LinkedHashMap<>();
      reads.forEach((group, read) -> groups.put(group, copiedSeq(group, read.join())));
      return respond(GenerationGate.answer(given, generation, inbox, groups, committed));
    });
  }

  /**
   * {@code GET /v1/users/%23groupId/inbox?copyOf=P&generation=G} (an instance-signed sub-read, checked by the
   * caller): the seq here of position P of generation G of the timeline, G being the generation before this one.
   */
  CompletableFuture<Response> copyOf(Request request, String owner) {
    if (!Ids.isGroupTimeline(owner)) {
      throw HttpError.badRequest("query parameter 'copyOf' is for group timelines only");
    }
    long position = request.longQuery("copyOf", 0, 0, Long.MAX_VALUE);
    long of = request.longQuery("generation", -1, 0, Integer.MAX_VALUE);
    if (of != generation - 1) {
      throw new HttpError(409, "this is inbox generation " + generation + ": it holds copies of generation "
          + (generation - 1) + ", not " + of);
    }
    return router.route("group-copy", INBOX_STORE, owner, request,
        partition -> copyAnswer(partition, owner, (int) of, position));
  }

  private Response copyAnswer(int partition, String owner, int prevGeneration, long position) {
    OptionalLong seq = GenerationGate.translate(copies(partition), owner, prevGeneration, position);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("seq", seq.isPresent() ? seq.getAsLong() : null);
    return Response.json(200, body);
  }

  /** Position {@code position} of generation {@code prevGeneration} of group {@code groupId}'s timeline, here. */
  private CompletableFuture<Response> fetchCopy(String groupId, int prevGeneration, long position,
      Principal caller) {
    String owner = Ids.groupTimeline(groupId);
    String path = "/v1/users/" + URLEncoder.encode(owner, StandardCharsets.UTF_8) + "/inbox";
    String rawUri = path + "?copyOf=" + position + "&generation=" + prevGeneration;
    Request request = new Request("GET", path, Map.of("userId", owner), Map.of("copyOf", Long.toString(position),
        "generation", Integer.toString(prevGeneration)), Map.of(), new byte[0], rawUri, caller,
        OptionalLong.empty());
    return router.route("group-copy", INBOX_STORE, owner, request,
        partition -> copyAnswer(partition, owner, prevGeneration, position));
  }

  /**
   * The translated position in a copy sub-read's answer (empty: not applied there yet); a refusal (429) passes on as
   * it is, anything else but a 200 is a 503.
   */
  static OptionalLong copiedSeq(String groupId, Response response) {
    if (response.status() == 429) {
      throw new HttpError(429, "too many requests waiting, retry", Map.of("Retry-After",
          response.headers().getOrDefault("Retry-After", OwnerRouter.RETRY_AFTER_SECONDS)));
    }
    if (response.status() != 200) {
      LOG.debug("Copy of group {}'s timeline answered {}", groupId, response.status());
      throw OwnerRouter.unavailable();
    }
    try {
      JsonNode seq = Json.MAPPER.readTree(response.body()).get("seq");
      if (seq == null || !(seq.isNull() || seq.canConvertToLong())) {
        throw new IOException("no seq");
      }
      return seq.isNull() ? OptionalLong.empty() : OptionalLong.of(seq.asLong());
    } catch (IOException | RuntimeException e) {
      LOG.warn("Unreadable copy answer of group {}: {}", groupId, e.toString());
      throw OwnerRouter.unavailable();
    }
  }

  private CopiedSeqs copies(int partition) {
    return CopiedSeqs.interactive(streams, COPY_INDEX_STORE, COPY_APPLIED_STORE, partition,
        () -> inboxEnds.copyApplied(partition));
  }

  private static Response respond(GenerationGate.Answer answer) {
    Response response = Response.json(answer.status(), answer.body());
    return answer.status() == 503 ? response.withHeader("Retry-After", OwnerRouter.RETRY_AFTER_SECONDS) : response;
  }
}
