package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.edge.http.Json;
import dev.impipe.inbox.query.SyncCursor;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Where a connection's backlog starts: the committed cursor, or the device's own, followed through 409 and 503. */
class BacklogStartTest {

  private static final SyncCursor OLD = SyncCursor.of(41, Map.of("g1", 7L));
  private static final SyncCursor TRANSLATED = SyncCursor.of(12, Map.of("g1", 3L)).inGeneration(1);

  private static JsonNode body(Map<String, Object> fields) {
    return Json.MAPPER.valueToTree(fields);
  }

  private static JsonNode resyncFrom(SyncCursor cursor) {
    return body(Map.of("error", "inbox generation 0 is gone; resync from " + cursor.encode(), "cursor",
        cursor.encode()));
  }

  @Test
  void withoutACursorTheBacklogStartsAtTheCommittedCursorAndEveryAnswerIsTheBacklogs() {
    // Given a device that sent no cursor
    BacklogStart start = BacklogStart.of(Optional.empty());
    // Then the first page is read without after, and a 409 or 503 is left to the backlog as before
    assertThat(start.after()).isNull();
    assertThat(start.cursor()).isNull();
    assertThat(start.answered(409, resyncFrom(TRANSLATED), null)).isEqualTo(BacklogStart.Decision.BACKLOG);
    assertThat(start.answered(503, body(Map.of("error", "not ready")), "1")).isEqualTo(BacklogStart.Decision.BACKLOG);
    assertThat(start.after()).isNull();
  }

  @Test
  void aCursorStartsTheBacklogAfterIt() {
    BacklogStart start = BacklogStart.of(Optional.of(OLD.encode()));
    assertThat(start.cursor()).isEqualTo(OLD);
    assertThat(start.after()).isEqualTo(OLD.encode());
    // a page, or a refusal that is not about the cursor, is the backlog's to handle
    assertThat(start.answered(200, body(Map.of("entries", java.util.List.of())), null))
        .isEqualTo(BacklogStart.Decision.BACKLOG);
    assertThat(start.answered(429, body(Map.of("error", "busy")), "1")).isEqualTo(BacklogStart.Decision.BACKLOG);
    assertThat(start.answered(403, body(Map.of("error", "no")), null)).isEqualTo(BacklogStart.Decision.BACKLOG);
    assertThat(start.cursor()).isEqualTo(OLD);
  }

  @Test
  void aMalformedCursorIsRefusedClearly() {
    for (String bad : new String[] {"", "not-a-cursor", "djF8eA", SyncCursor.of(1, Map.of()).encode() + "!"}) {
      assertThatThrownBy(() -> BacklogStart.of(Optional.of(bad))).as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("query parameter 'cursor' is not a cursor this gateway or a sync returned");
    }
  }

  @Test
  void a409GoesOnFromTheCursorInTheAnswerAtOnce() {
    // Given a device's generation-0 cursor at a generation-1 gateway
    BacklogStart start = BacklogStart.of(Optional.of(OLD.encode()));
    // When the sync answers 409 with it translated
    BacklogStart.Decision d = start.answered(409, resyncFrom(TRANSLATED), null);
    // Then the first page is read again at once, after the translated cursor
    assertThat(d.action()).isEqualTo(BacklogStart.Action.READ_AGAIN);
    assertThat(d.delayMs()).isZero();
    assertThat(start.cursor()).isEqualTo(TRANSLATED);
    assertThat(start.after()).isEqualTo(TRANSLATED.encode());
  }

  @Test
  void a409WithoutAReadableCursorOrOneTooManyGivesUp() {
    BacklogStart unreadable = BacklogStart.of(Optional.of(OLD.encode()));
    BacklogStart.Decision d = unreadable.answered(409, body(Map.of("error", "gone", "cursor", "%%%")), null);
    assertThat(d.action()).isEqualTo(BacklogStart.Action.GIVE_UP);
    assertThat(d.reason()).contains("gone");
    assertThat(BacklogStart.of(Optional.of(OLD.encode())).answered(409, body(Map.of("error", "x")), null).action())
        .isEqualTo(BacklogStart.Action.GIVE_UP);
    // and a cursor that keeps being answered 409 is followed MAX_RESYNCS times, not for ever
    BacklogStart loop = BacklogStart.of(Optional.of(OLD.encode()));
    for (int i = 0; i < BacklogStart.MAX_RESYNCS; i++) {
      assertThat(loop.answered(409, resyncFrom(TRANSLATED), null).action()).isEqualTo(BacklogStart.Action.READ_AGAIN);
    }
    assertThat(loop.answered(409, resyncFrom(TRANSLATED), null).action()).isEqualTo(BacklogStart.Action.GIVE_UP);
  }

  @Test
  void a503IsReadAgainAfterRetryAfterForABoundedTimeThenGivenUp() {
    // Given a device's cursor the new generation's store has not applied the copy up to yet
    BacklogStart start = BacklogStart.of(Optional.of(OLD.encode()));
    JsonNode notYet = body(Map.of("error", "the copy of inbox generation 0 is not applied here up to your seq 41"));
    // When it answers 503 with Retry-After: 2
    BacklogStart.Decision d = start.answered(503, notYet, "2");
    // Then the page is read again after 2 s, the same cursor
    assertThat(d).isEqualTo(new BacklogStart.Decision(BacklogStart.Action.READ_AGAIN, 2_000, null));
    assertThat(start.cursor()).isEqualTo(OLD);
    // And after MAX_WAIT_MS of such waits in all it gives up (the device reconnects with backoff)
    long waited = 2_000;
    while (waited + 2_000 <= BacklogStart.MAX_WAIT_MS) {
      assertThat(start.answered(503, notYet, "2").action()).isEqualTo(BacklogStart.Action.READ_AGAIN);
      waited += 2_000;
    }
    BacklogStart.Decision last = start.answered(503, notYet, "2");
    assertThat(last.action()).isEqualTo(BacklogStart.Action.GIVE_UP);
    assertThat(last.reason()).contains("60 s");
  }

  @Test
  void retryAfterIsReadInSecondsWithinBounds() {
    assertThat(BacklogStart.retryMs(null)).isEqualTo(1_000);
    assertThat(BacklogStart.retryMs("x")).isEqualTo(1_000);
    assertThat(BacklogStart.retryMs(" 3 ")).isEqualTo(3_000);
    assertThat(BacklogStart.retryMs("0")).isEqualTo(100);
    assertThat(BacklogStart.retryMs("-4")).isEqualTo(100);
    assertThat(BacklogStart.retryMs("3600")).isEqualTo(BacklogStart.MAX_RETRY_MS);
    assertThat(BacklogStart.retryMs(Long.toString(Long.MAX_VALUE))).isEqualTo(BacklogStart.MAX_RETRY_MS);
  }
}
