package dev.impipe.fanout.internal;

import org.apache.kafka.streams.state.KeyValueStore;

/** A logical clock kept in the task's store, so it survives restarts and moves with the task. */
final class TaskClock {

  private static final String KEY = "clock";
  /** The highest {@code im.messages} offset this task has processed (any record, any conversation). */
  private static final String PROCESSED = "processed-offset";
  /**
   * Written by earlier builds: the highest offset processed but not fanned out, or the last seq of a removed group
   * (they kept each group's last seq in its {@link GroupState} instead of {@link #PROCESSED}). Still read, and still
   * raised by {@link #floor}, so state of those builds keeps its boundaries.
   */
  private static final String UNACCEPTED = "unaccepted-offset";
  private final KeyValueStore<String, Long> store;

  TaskClock(KeyValueStore<String, Long> store) {
    this.store = store;
  }

  /** The next reading: strictly greater than every earlier one of this task. */
  long tick() {
    Long now = store.get(KEY);
    long next = now == null ? 1 : now + 1;
    store.put(KEY, next);
    return next;
  }

  /**
   * Remembers that the {@code im.messages} record at {@code offset} was processed (whatever came of it: fanned out,
   * refused, invalid, a duplicate, a membership change). Called for every record, so the store should be cached:
   * then it is one write per commit, not per record.
   */
  void processed(long offset) {
    raise(PROCESSED, offset);
  }

  /**
   * Raises the boundary floor to {@code seq}: the last seq of a group whose state is removed, as earlier builds
   * kept it (see {@link #UNACCEPTED}). Never lowered.
   */
  void floor(long seq) {
    raise(UNACCEPTED, seq);
  }

  /** Stores {@code value} under {@code key} unless it is negative (none) or below what is stored. */
  private void raise(String key, long value) {
    if (value >= 0) {
      Long stored = store.get(key);
      store.put(key, stored == null ? value : Math.max(stored, value));
    }
  }

  /**
   * The first conversation seq (offset in {@code im.messages}) a membership change processed now applies to: after
   * every record this task has processed. Every record of the group processed later has a higher offset, every one
   * processed earlier a lower one, and the offsets in between belong to other conversations (one partition holds
   * many), so "history from the join" is exactly what the fan-out delivered after it. ({@code group.lastSeq} and
   * the floor are what earlier builds recorded instead.)
   */
  long joinBoundary(GroupState group) {
    Long processed = store.get(PROCESSED);
    Long floor = store.get(UNACCEPTED);
    return Math.max(group.lastSeq(), Math.max(processed == null ? -1 : processed, floor == null ? -1 : floor)) + 1;
  }
}
