package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.inbox.query.SyncCursor;
import java.util.ArrayList;
import java.util.List;

/**
 * One merged sync page as the backlog reads it: its entries (each with its source, seq and message id, and the JSON
 * the device gets), the inbox position it reaches ({@code next}, -1 when absent), the cursor the store says the
 * device may commit (null when absent or unreadable), whether more follows, and the large groups it reports.
 */
record BacklogPage(List<Entry> entries, long next, SyncCursor cursor, boolean hasMore, JsonNode largeGroups) {

  /** An entry of the page: of the inbox ({@link #inbox()}) or of the timeline {@code #groupId} of a large group. */
  record Entry(String source, long seq, String messageId, JsonNode json) {

    boolean inbox() {
      return source.equals("inbox");
    }
  }

  /** Reads a page of the sync API's answer. */
  static BacklogPage of(JsonNode body) {
    List<Entry> entries = new ArrayList<>();
    for (JsonNode e : body.path("entries")) {
      entries.add(new Entry(e.path("source").asText("inbox"), e.path("seq").asLong(),
          e.path("messageId").isTextual() ? e.get("messageId").asText() : null, e));
    }
    SyncCursor cursor = null;
    if (body.path("cursor").isTextual()) {
      try {
        cursor = SyncCursor.decode(body.get("cursor").asText());
      } catch (IllegalArgumentException e) {
        cursor = null; // unreadable: the positions pushed stand
      }
    }
    return new BacklogPage(List.copyOf(entries), body.path("next").asLong(-1), cursor,
        body.path("hasMore").asBoolean(false), body.path("largeGroups"));
  }
}
