package dev.impipe.delay.internal;

import dev.impipe.runtime.streams.OrderedKey;

/**
 * Where one task's sweep is, and where its position record is filed (pure: the processor reads and writes the
 * stores). {@link #resumeFrom()} is the smallest schedule key any undelivered entry can have, {@link #fileFromMs()}
 * the earliest due time a new entry may be filed under; see {@link ScheduleCodec.Position}.
 */
final class SweepCursor {

  /** A position record to store at {@code ts}, and the one to delete at {@code previousTs} (if not NONE). */
  record Move(long ts, long previousTs, ScheduleCodec.Position position) {
    static final long NONE = Long.MIN_VALUE;
  }

  private final long segmentMs;
  private byte[] resumeFrom;
  private long fileFromMs;
  /** The time the stored position record is filed under (Move.NONE: none written by this instance). */
  private long positionTs = Move.NONE;

  /** The cursor of a task whose stores hold {@code stored} (null: a task that never swept). */
  SweepCursor(ScheduleCodec.Position stored, long segmentMs) {
    this.segmentMs = segmentMs;
    if (stored == null) {
      resumeFrom = ScheduleCodec.duePrefix(0);
      fileFromMs = 0;
    } else {
      resumeFrom = stored.resumeFrom();
      fileFromMs = stored.fileFromMs();
      positionTs = ScheduleRules.positionTs(resumeFrom, segmentMs);
    }
  }

  byte[] resumeFrom() {
    return resumeFrom;
  }

  long fileFromMs() {
    return fileFromMs;
  }

  /** Whether {@code scheduleKey} is behind the sweep: delivered, or gone for CANCEL and replace. */
  boolean behind(byte[] scheduleKey) {
    return OrderedKey.compare(scheduleKey, resumeFrom) < 0;
  }

  /** Whether nothing can be due before {@code upTo} (or the wall clock stepped back): never deliver early. */
  boolean nothingBefore(byte[] upTo) {
    return OrderedKey.compare(resumeFrom, upTo) >= 0;
  }

  /** A sweep stopped at its budget: resume right after the last key it delivered; later arrivals after its ms. */
  void stoppedAfter(byte[] lastKey) {
    if (lastKey != null) {
      resumeFrom = OrderedKey.after(lastKey);
      fileFromMs = ScheduleCodec.dueOf(lastKey) + 1;
    }
  }

  /** A sweep delivered everything due up to {@code upTo} (exclusive) at {@code now}. */
  void caughtUp(byte[] upTo, long now) {
    resumeFrom = upTo;
    fileFromMs = now + 1;
  }

  /**
   * The position record to write with {@code pending} undelivered schedules, or null: it is written if something
   * was delivered or it moved into another segment; otherwise re-sweeping from the older stored position after a
   * crash finds nothing new.
   */
  Move move(boolean delivered, long pending) {
    long ts = ScheduleRules.positionTs(resumeFrom, segmentMs);
    if (!delivered && ts == positionTs) {
      return null;
    }
    long previous = positionTs == ts ? Move.NONE : positionTs;
    positionTs = ts;
    return new Move(ts, previous, new ScheduleCodec.Position(resumeFrom, fileFromMs, pending));
  }
}
