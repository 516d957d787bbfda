package dev.impipe.fanout.internal;

import org.apache.kafka.streams.state.KeyValueStore;

/** A logical clock kept in the task's store, so it survives restarts and moves with the task. */
final class TaskClock {

  private static final String KEY = "clock";
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
   * Remembers that the {@code im.messages} record at {@code offset} was processed but not fanned out (refused,
   * invalid or a duplicate), or the last seq of a group whose last member left (its state is removed). Such records still have their offset in the conversation's log, and a join processed
   * after them must start after them too (see {@link #joinBoundary}).
   */
  void unaccepted(long offset) {
    if (offset >= 0) {
      Long stored = store.get(UNACCEPTED);
      // Never lowered: the seq of a removed group (processed earlier) must not undo a later record's offset.
      if (stored == null || offset > stored) {
        store.put(UNACCEPTED, offset);
      }
    }
  }

  /**
   * The first conversation seq (offset in {@code im.messages}) a membership change processed now applies to: after
   * the group's last fanned-out record and after every record this task processed without fanning it out (the
   * group may not even have existed then). Every record of the group processed later has a higher offset, every one
   * processed earlier a lower one, so "history from the join" is exactly what the fan-out delivered after it.
   */
  long joinBoundary(GroupState group) {
    Long unaccepted = store.get(UNACCEPTED);
    return Math.max(group.lastSeq(), unaccepted == null ? -1 : unaccepted) + 1;
  }
}
