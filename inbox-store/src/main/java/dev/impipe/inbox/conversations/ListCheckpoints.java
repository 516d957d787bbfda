package dev.impipe.inbox.conversations;

import dev.impipe.avro.InboxEntry;
import dev.impipe.runtime.streams.StreamThreadConsumers;
import dev.impipe.runtime.streams.WriteBackStore;
import java.time.Duration;
import java.util.Arrays;
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
 * {@link WriteBackStore}s: a user's states fall into one of {@link WriteBackStore#BUCKETS} buckets (by the user), and
 * one bucket's changed states are written (encoded, into RocksDB and the changelog) at a commit every {@code
 * IM_CONVERSATION_CHECKPOINT_INTERVAL} / buckets, in turn, so that each state changed is written once per interval
 * and every commit carries a small share of the writing; every bucket at once when {@code
 * IM_CONVERSATION_CHECKPOINT_MAX_PENDING} states wait, and at the first commit after the task started. With each
 * write-back, in the same transaction, the checkpoint store records per input partition (and bucket, when one was
 * written) the offset of the last entry the written states hold.
 *
 * <p>Between write-backs Kafka Streams commits input offsets past the checkpoints. When the task starts again (after
 * a crash, a move to another instance, an exactly-once rollback), each bucket's states in the stores are as of its
 * checkpoint; {@link #replay} reads the entries after the oldest checkpoint up to the committed offset and applies
 * each entry to which its user's bucket has not been written, before the task processes anything. Invariant: a task's
 * states without checkpoints are those of its committed offset (no write-back has been skipped since its start),
 * because the first commit after the first entry always writes every bucket.
 */
final class ListCheckpoints {

  private static final Logger LOG = LoggerFactory.getLogger(ListCheckpoints.class);
  private static final Duration COMMITTED_TIMEOUT = Duration.ofSeconds(30);

  private final KeyValueStore<String, Long> store;
  private final List<WriteBackStore<?>> stores;
  private final long bucketIntervalMs;
  private final int maxPending;
  private final Map<TopicPartition, Long> applied = new HashMap<>();
  private TopicPartition last;
  private boolean written;
  private int nextBucket;
  private long lastWriteBackMs;
  private long nowMs;

  /**
   * @param store the checkpoints (uncached: a put is in the transaction of the write-back that makes it)
   * @param stores the list's write-back stores (keys starting with the user): armed together, so they are written at
   *     the same commit
   * @param intervalMs how often each state changed is written; 0: every commit
   * @param startedMs when the task started (the interval counts from it)
   */
  ListCheckpoints(KeyValueStore<String, Long> store, List<WriteBackStore<?>> stores, long intervalMs,
      int maxPending, long startedMs) {
    this.store = store;
    this.nowMs = startedMs;
    this.lastWriteBackMs = startedMs;
    this.stores = stores;
    this.bucketIntervalMs = intervalMs / WriteBackStore.BUCKETS;
    this.maxPending = maxPending;
    for (WriteBackStore<?> s : stores) {
      s.writeBackEveryCommit(intervalMs == 0);
    }
    stores.get(0).onWriteBack(this::wroteBack);
  }

  /** The bucket of {@code user}'s states. */
  static int bucket(String user) {
    return WriteBackStore.groupBucket(ConversationKeys.statesFrom(user));
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
    if (!written || stores.get(0).pending() >= maxPending) {
      for (WriteBackStore<?> s : stores) {
        s.arm();
      }
    } else if (now - lastWriteBackMs >= bucketIntervalMs) {
      for (WriteBackStore<?> s : stores) {
        s.arm(nextBucket);
      }
    }
  }

  /**
   * Records how far the buckets just written go: under the partition's key when every bucket was written (one record,
   * also at every commit with the interval 0), under the bucket's key otherwise. Offsets only grow, so a bucket's
   * checkpoint is the greater of the two.
   */
  private void wroteBack(long buckets) {
    if (applied.isEmpty()) {
      return;
    }
    for (Map.Entry<TopicPartition, Long> a : applied.entrySet()) {
      if (buckets == WriteBackStore.ALL) {
        store.put(key(a.getKey()), a.getValue());
        continue;
      }
      for (int b = 0; b < WriteBackStore.BUCKETS; b++) {
        if ((buckets & (1L << b)) != 0) {
          store.put(key(a.getKey(), b), a.getValue());
        }
      }
    }
    written = true;
    lastWriteBackMs = nowMs;
    if (buckets != WriteBackStore.ALL) {
      nextBucket = (Long.numberOfTrailingZeros(buckets) + 1) % WriteBackStore.BUCKETS;
    }
  }

  /**
   * Applies again, through {@code sink}, the entries after the checkpoints of this task up to its committed offset
   * (read by {@code replay}): each to which its user's bucket has not been written. Called from the processor's
   * {@code init}, on the stream thread, before the task processes a record. Not when the stores still hold changes
   * in memory (Kafka Streams suspended the task, which closes its processors but not its stores, after a commit, and
   * resumed it). Without a stream-thread consumer to ask (a test driver), nothing is replayed.
   */
  void replay(InboxReplay replay, Map<String, Object> appConfigs, String clientId, InboxReplay.Sink sink) {
    if (stores.get(0).held() > 0) {
      // A task resumed after a suspension keeps its open stores: their changes in memory are its committed input.
      return;
    }
    Map<TopicPartition, long[]> checkpoints = checkpoints(store);
    if (checkpoints.isEmpty()) {
      return;
    }
    if (!StreamThreadConsumers.knows(Thread.currentThread().getName())) {
      LOG.warn("Conversation list: no stream-thread consumer to ask for the committed offsets of {}; entries after "
          + "their checkpoints are not replayed", checkpoints.keySet());
      return;
    }
    for (Map.Entry<TopicPartition, long[]> c : checkpoints.entrySet()) {
      TopicPartition tp = c.getKey();
      long[] byBucket = c.getValue();
      Optional<Long> committed = StreamThreadConsumers.committed(tp, COMMITTED_TIMEOUT);
      long from = Arrays.stream(byBucket).min().getAsLong() + 1;
      if (committed.isEmpty() || committed.get() <= from) {
        continue;
      }
      long started = System.nanoTime();
      AfterCheckpoints after = new AfterCheckpoints(byBucket, sink);
      long n = replay.replay(appConfigs, clientId, tp, from, committed.get(), (offset, user, entry) -> {
        after.apply(offset, user, entry);
        applied(tp, offset, nowMs);
      });
      LOG.info("Conversation list: replayed {} entries of {} after its checkpoints ({} to {}; {} read)",
          after.applied(), tp, from, committed.get(), n);
      LOG.debug("Conversation list: replay of {} took {} ms", tp, (System.nanoTime() - started) / 1_000_000);
    }
  }

  /** Hands {@code sink} the entries after their user's bucket's checkpoint in {@code byBucket}; drops the rest. */
  static final class AfterCheckpoints implements InboxReplay.Sink {
    private final long[] byBucket;
    private final InboxReplay.Sink sink;
    private long applied;

    AfterCheckpoints(long[] byBucket, InboxReplay.Sink sink) {
      this.byBucket = byBucket;
      this.sink = sink;
    }

    @Override
    public void apply(long offset, String user, InboxEntry entry) {
      if (user != null && offset > byBucket[bucket(user)]) {
        sink.apply(offset, user, entry);
        applied++;
      }
    }

    /** How many entries it handed on. */
    long applied() {
      return applied;
    }
  }

  /**
   * The checkpoints in {@code store} per partition, one per bucket: the greater of the bucket's own and the
   * partition's (every bucket written; a build without buckets wrote only that one). A partition without the latter
   * has none.
   */
  static Map<TopicPartition, long[]> checkpoints(KeyValueStore<String, Long> store) {
    Map<TopicPartition, Long> whole = new HashMap<>();
    Map<TopicPartition, long[]> own = new HashMap<>();
    try (KeyValueIterator<String, Long> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<String, Long> kv = it.next();
        int slash = kv.key.lastIndexOf('/');
        if (kv.key.indexOf('/') == slash) {
          whole.put(partition(kv.key), kv.value);
        } else {
          long[] byBucket = own.computeIfAbsent(partition(kv.key.substring(0, slash)),
              t -> new long[WriteBackStore.BUCKETS]);
          byBucket[Integer.parseInt(kv.key.substring(slash + 1))] = kv.value;
        }
      }
    }
    Map<TopicPartition, long[]> checkpoints = new HashMap<>();
    for (Map.Entry<TopicPartition, Long> w : whole.entrySet()) {
      long[] byBucket = own.getOrDefault(w.getKey(), new long[WriteBackStore.BUCKETS]);
      for (int b = 0; b < byBucket.length; b++) {
        byBucket[b] = Math.max(byBucket[b], w.getValue());
      }
      checkpoints.put(w.getKey(), byBucket);
    }
    return checkpoints;
  }

  static String key(TopicPartition tp, int bucket) {
    return key(tp) + "/" + bucket;
  }

  static String key(TopicPartition tp) {
    return tp.topic() + "/" + tp.partition();
  }

  static TopicPartition partition(String key) {
    int slash = key.lastIndexOf('/');
    return new TopicPartition(key.substring(0, slash), Integer.parseInt(key.substring(slash + 1)));
  }
}
