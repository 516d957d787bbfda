package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.inbox.query.SyncCursor;
import java.util.Optional;

/**
 * Where a connection's backlog starts. Without a cursor from the device: after its committed cursor (the sync
 * without {@code after}), as always. With one ({@code GET /v1/ws?cursor=}, the cursor of the last entry the device
 * processed): after that cursor (the sync's {@code after}), so a device resumes from its own position, not from
 * what was committed. That matters across an inbox grow (ADR 0014): the committed cursor of the new generation is
 * the one the grow translated, and a device that ACKed more on the old generation since would get those entries
 * again; its own cursor is translated by the sync API instead. The first page's answer then says:
 * <ul>
 *   <li>409 with a {@code cursor}: the device's cursor is of another inbox generation; read again after the cursor
 *       in the answer (the device's, translated into the generation served; for an unrelated generation the
 *       committed one), at most {@link #MAX_RESYNCS} times;
 *   <li>503: the copy is not applied up to the cursor yet (or the store is not ready); read again after
 *       {@code Retry-After} (1 s when absent, at most {@link #MAX_RETRY_MS}), for at most {@link #MAX_WAIT_MS} in
 *       all, then give up: the connection closes 4011 and the device reconnects with backoff.
 * </ul>
 * Anything else is the backlog's usual handling. A cursor behind the committed one is served after it, as the sync
 * API serves an {@code after} behind it (the device asked for those entries again). Pure; the connection's lock
 * guards it.
 */
final class BacklogStart {

  /** 409s followed on one connection: one for the translation, one more should the generation move meanwhile. */
  static final int MAX_RESYNCS = 2;
  /** The longest wait one 503 asks for that is honoured as asked. */
  static final long MAX_RETRY_MS = 5_000;
  /** The 503 waits of one connection's first page, summed, before it gives up. */
  static final long MAX_WAIT_MS = 60_000;

  /** What to do with the first page's answer. */
  enum Action {
    /** Not the start's concern: the backlog handles it (a page, 401, 429, ...). */
    BACKLOG,
    /** Read the first page again, after {@link BacklogStart#after()}, in {@link Decision#delayMs()}. */
    READ_AGAIN,
    /** Close 4011 with {@link Decision#reason()}: the device reconnects with backoff. */
    GIVE_UP
  }

  record Decision(Action action, long delayMs, String reason) {
    static final Decision BACKLOG = new Decision(Action.BACKLOG, 0, null);

    static Decision again(long delayMs) {
      return new Decision(Action.READ_AGAIN, delayMs, null);
    }

    static Decision giveUp(String reason) {
      return new Decision(Action.GIVE_UP, 0, reason);
    }
  }

  private SyncCursor after;
  private int resyncs;
  private long waitedMs;

  private BacklogStart(SyncCursor after) {
    this.after = after;
  }

  /** After the committed cursor. */
  static BacklogStart committed() {
    return new BacklogStart(null);
  }

  /**
   * From the query parameter {@code cursor}: absent, after the committed cursor; else after it.
   * {@link IllegalArgumentException} with the message for the device when it is not a cursor.
   */
  static BacklogStart of(Optional<String> cursor) {
    if (cursor.isEmpty()) {
      return committed();
    }
    try {
      return new BacklogStart(SyncCursor.decode(cursor.get()));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("query parameter 'cursor' is not a cursor this gateway or a sync returned",
          e);
    }
  }

  /** The cursor the first page is read after (null: the committed one). */
  SyncCursor cursor() {
    return after;
  }

  /** {@link #cursor()} as the sync's {@code after} (null: none). */
  String after() {
    return after == null ? null : after.encode();
  }

  /**
   * The first page was answered {@code status} with {@code body} and the {@code Retry-After} header
   * {@code retryAfter} (null: none).
   */
  Decision answered(int status, JsonNode body, String retryAfter) {
    if (after == null) {
      return Decision.BACKLOG;
    }
    if (status == 409) {
      SyncCursor from = cursorOf(body);
      if (from == null) {
        return Decision.giveUp("the device's cursor was refused: " + body.path("error").asText("409"));
      }
      if (++resyncs > MAX_RESYNCS) {
        return Decision.giveUp("more than " + MAX_RESYNCS + " resyncs of the device's cursor");
      }
      after = from;
      return Decision.again(0);
    }
    if (status == 503) {
      long delay = retryMs(retryAfter);
      if (waitedMs + delay > MAX_WAIT_MS) {
        return Decision.giveUp("the device's cursor could not be served within " + MAX_WAIT_MS / 1000 + " s");
      }
      waitedMs += delay;
      return Decision.again(delay);
    }
    return Decision.BACKLOG;
  }

  private static SyncCursor cursorOf(JsonNode body) {
    if (!body.path("cursor").isTextual()) {
      return null;
    }
    try {
      return SyncCursor.decode(body.get("cursor").asText());
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** {@code Retry-After} in seconds as ms: 1 s when absent or unreadable, between 100 ms and {@link #MAX_RETRY_MS}. */
  static long retryMs(String retryAfter) {
    long seconds;
    try {
      seconds = retryAfter == null ? 1 : Long.parseLong(retryAfter.trim());
    } catch (NumberFormatException e) {
      seconds = 1;
    }
    return Math.max(100, Math.min(MAX_RETRY_MS / 1000, seconds) * 1000);
  }
}
