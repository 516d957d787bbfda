package dev.impipe.push;

import java.util.concurrent.atomic.LongAdder;

/**
 * The bytes of frames one socket holds written and not yet flushed to the network: every frame (backlog page
 * entries, live pushes, replies) takes its size when written and gives it back when the write completes. A device
 * that does not read keeps it full; the gateway then stops reading its backlog and tells it to resync instead of
 * queueing more. One frame larger than the whole budget still goes out when nothing else is waiting, so a fat entry
 * is never stuck. Thread-safe; {@code total} sums every socket's use (a gauge).
 */
final class WriteBudget {

  private final long limit;
  private final LongAdder total;
  private long used;

  WriteBudget(long limit, LongAdder total) {
    this.limit = limit;
    this.total = total;
  }

  /** Takes {@code bytes} if they fit (or nothing else is held); false, taking nothing, when they do not. */
  synchronized boolean tryTake(int bytes) {
    if (used > 0 && used + bytes > limit) {
      return false;
    }
    take(bytes);
    return true;
  }

  /** Gives back the bytes of a frame whose write completed; true when at most half the budget is now held. */
  synchronized boolean give(int bytes) {
    long back = Math.min(bytes, used);
    used -= back;
    total.add(-back);
    return used <= limit / 2;
  }

  /** Gives back whatever is held (the socket is gone). */
  synchronized void clear() {
    total.add(-used);
    used = 0;
  }

  /** Takes {@code bytes} whether they fit or not (a page already sized to fit, a closing frame). */
  synchronized void take(int bytes) {
    used += bytes;
    total.add(bytes);
  }

  /** Bytes held now. */
  synchronized long used() {
    return used;
  }

  /** Room left. */
  synchronized long free() {
    return Math.max(0, limit - used);
  }

  /** Whether a backlog page may be read: at most half the budget is held, so the page has the other half. */
  synchronized boolean roomForPage() {
    return used <= limit / 2;
  }

  long limit() {
    return limit;
  }

  /** The UTF-8 length of {@code s}, without encoding it. */
  static int utf8Length(CharSequence s) {
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }
}
