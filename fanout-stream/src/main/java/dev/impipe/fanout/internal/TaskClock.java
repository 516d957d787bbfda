package dev.impipe.fanout.internal;

import org.apache.kafka.streams.state.KeyValueStore;

/** A logical clock kept in the task's store, so it survives restarts and moves with the task. */
final class TaskClock {

  private static final String KEY = "clock";
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
}
