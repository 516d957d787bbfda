package dev.impipe.push;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Where the reader starts in an inbox partition it gains, and what it "passed" there. The reader starts at the
 * partition's end E (what came before is the store's backlog), but a connection's backlog must wait until the store
 * holds the last record before E, and the offset before E is usually a transaction marker, which the store never
 * applies. So the reader first reads a little before E to learn the offset of the last committed record below E
 * (reading further back only when that stretch held none), routes nothing of the partition meanwhile, and then reads
 * on from E. Not thread-safe (the reader thread's).
 */
final class CatchUp {

  /** Offsets read back before the end of a gained partition, first time. */
  static final long WINDOW = 100;

  private static final class Pending {
    final long end;
    long from;
    long last = -1;

    Pending(long end, long from) {
      this.end = end;
      this.from = from;
    }
  }

  private final Map<Integer, Pending> pending = new HashMap<>();

  /**
   * Partition {@code partition} is gained with its end at {@code end}: the offset to seek to (empty: nothing before,
   * the partition is caught up at once with nothing passed).
   */
  OptionalLong start(int partition, long end) {
    if (end <= 0) {
      pending.remove(partition);
      return OptionalLong.empty();
    }
    long from = Math.max(0, end - WINDOW);
    pending.put(partition, new Pending(end, from));
    return OptionalLong.of(from);
  }

  /** Whether {@code partition} is still being caught up. */
  boolean catching(int partition) {
    return pending.containsKey(partition);
  }

  /** A record read at {@code offset}: whether to route it (false while its partition is caught up). */
  boolean route(int partition, long offset) {
    Pending p = pending.get(partition);
    if (p == null) {
      return true;
    }
    if (offset < p.end) {
      p.last = Math.max(p.last, offset);
    }
    return false;
  }

  /**
   * A catch-up step: where to read {@code partition} from next ({@code seekTo}), and when {@code done} the offset of
   * the last committed record before the end ({@code lastBefore}, -1: none).
   */
  record Step(boolean done, long lastBefore, long seekTo) {}

  /**
   * The reader's position in {@code partition} is now {@code position}: null while it reads up to the end; once it
   * reached it, done (read on from the end) or, when that stretch held no committed record, read further back.
   */
  Step advanced(int partition, long position) {
    Pending p = pending.get(partition);
    if (p == null || position < p.end) {
      return null;
    }
    if (p.last >= 0 || p.from == 0) {
      pending.remove(partition);
      return new Step(true, p.last, p.end);
    }
    long span = (p.end - p.from) * 10;
    p.from = Math.max(0, p.from - span);
    return new Step(false, -1, p.from);
  }

  void forget(int partition) {
    pending.remove(partition);
  }
}
