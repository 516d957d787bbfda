package dev.impipe.inbox.conversations;

import dev.impipe.runtime.streams.StreamThreadConsumers;
import dev.impipe.runtime.streams.WriteBackStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the conversation list's changes are written to its stores, and how far those go. The list's stores are
 * {@link WriteBackStore}s: their changes are written (encoded, into RocksDB and the changelog) at a commit once every
 * {@code IM_CONVERSATION_CHECKPOINT_INTERVAL}, or sooner when {@code IM_CONVERSATION_CHECKPOINT_MAX_PENDING} states
 * wait, and at the first commit after the task started; a busy conversation's state is then written once per
 * interval, not once per entry. With each write-back, in the same transaction, the checkpoint store records per input
 * partition the offset of the last entry the written states hold.
 *
 * <p>Between write-backs Kafka Streams commits input offsets past the checkpoint. When the task starts again (after
 * a crash, a move to another instance, an exactly-once rollback), its stores hold the states as of the checkpoint;
 * {@link #replay} applies the entries after it up to the committed offset again, before the task processes anything.
 * Invariant: a task's states without a checkpoint are those of its committed offset (no write-back has been skipped
 * since its start), because the first commit after the first entry always writes back.
 */
final class ListCheckpoints {

  private static final Logger LOG = LoggerFactory.getLogger(ListCheckpoints.class);
  private static final Duration COMMITTED_TIMEOUT = Duration.ofSeconds(30);

  private final KeyValueStore<String, Long> store;
  private final List<WriteBackStore<?>> stores;
  private final long intervalMs;
  private final int maxPending;
  private final Map<TopicPartition, Long> applied = new HashMap<>();
  private TopicPartition last;
  private boolean written;
  private long lastWriteBackMs;
  private long nowMs;

  /**
   * @param store the checkpoints (uncached: a put is in the transaction of the write-back that makes it)
   * @param stores the list's write-back stores: armed together, so they are written at the same commit
   * @param intervalMs 0: every commit
   * @param startedMs when the task started (the interval counts from it)
   */
  ListCheckpoints(KeyValueStore<String, Long> store, List<WriteBackStore<?>> stores, long intervalMs,
      int maxPending, long startedMs) {
    this.store = store;
    this.nowMs = startedMs;
    this.lastWriteBackMs = startedMs;
    this.stores = stores;
    this.intervalMs = intervalMs;
    this.maxPending = maxPending;
    for (WriteBackStore<?> s : stores) {
      s.writeBackEveryCommit(false);
    }
    stores.get(0).onWriteBack(this::wroteBack);
  }

  /** After the entry at {@code offset} of {@code topic}'s {@code partition} was applied (or skipped), at {@code now}. */
  void applied(String topic, int partition, long offset, long now) {
    if (last == null || last.partition() != partition || !last.topic().equals(topic)) {
      last = new TopicPartition(topic, partition);
    }
    applied(last, offset, now);
  }

  private void applied(TopicPartition tp, long offset, long now) {
    applied.put(tp, offset);
    nowMs = now;
    if (!written || now - lastWriteBackMs >= intervalMs || stores.get(0).pending() >= maxPending) {
      for (WriteBackStore<?> s : stores) {
        s.arm();
      }
    }
  }

  private void wroteBack() {
    for (Map.Entry<TopicPartition, Long> a : applied.entrySet()) {
      store.put(key(a.getKey()), a.getValue());
    }
    if (!applied.isEmpty()) {
      written = true;
      lastWriteBackMs = nowMs;
    }
  }

  /**
   * Applies again, through {@code sink}, the entries after each checkpoint of this task up to its committed offset
   * (read by {@code replay}). Called from the processor's {@code init}, on the stream thread, before the task
   * processes a record. Not when the stores still hold changes in memory (Kafka Streams suspended the task, which
   * closes its processors but not its stores, after a commit, and resumed it). Without a stream-thread consumer to ask
   * (a test driver), nothing is replayed.
   */
  void replay(InboxReplay replay, Map<String, Object> appConfigs, String clientId, InboxReplay.Sink sink) {
    if (stores.get(0).pending() > 0) {
      // A task resumed after a suspension keeps its open stores: their changes in memory are its committed input.
      return;
    }
    Map<TopicPartition, Long> checkpoints = new HashMap<>();
    try (KeyValueIterator<String, Long> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<String, Long> kv = it.next();
        checkpoints.put(partition(kv.key), kv.value);
      }
    }
    if (checkpoints.isEmpty()) {
      return;
    }
    if (!StreamThreadConsumers.knows(Thread.currentThread().getName())) {
      LOG.warn("Conversation list: no stream-thread consumer to ask for the committed offsets of {}; entries after "
          + "the checkpoints {} are not replayed", checkpoints.keySet(), checkpoints);
      return;
    }
    for (Map.Entry<TopicPartition, Long> c : checkpoints.entrySet()) {
      TopicPartition tp = c.getKey();
      Optional<Long> committed = StreamThreadConsumers.committed(tp, COMMITTED_TIMEOUT);
      long from = c.getValue() + 1;
      if (committed.isEmpty() || committed.get() <= from) {
        continue;
      }
      long started = System.nanoTime();
      long n = replay.replay(appConfigs, clientId, tp, from, committed.get(), (offset, user, entry) -> {
        sink.apply(offset, user, entry);
        applied(tp, offset, nowMs);
      });
      LOG.info("Conversation list: replayed {} entries of {} after its checkpoint ({} to {}) in {} ms", n, tp, from,
          committed.get(), (System.nanoTime() - started) / 1_000_000);
    }
  }

  static String key(TopicPartition tp) {
    return tp.topic() + "/" + tp.partition();
  }

  static TopicPartition partition(String key) {
    int slash = key.lastIndexOf('/');
    return new TopicPartition(key.substring(0, slash), Integer.parseInt(key.substring(slash + 1)));
  }
}
