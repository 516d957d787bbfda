package dev.impipe.push;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partitions the gateway's reader reads in {@code owned} mode (see {@link InboxReader}): what it is asked to read
 * ({@link #want}, any thread) is applied on the reader thread between two polls ({@link #reassign}). A kept partition
 * keeps its position; a gained inbox partition is caught up ({@link CatchUp}) before its users are served
 * ({@link #reading}) and its listeners told what came before ({@code gained}); a gained timeout partition starts at
 * its end.
 */
final class OwnedAssignment {

  private static final Logger LOG = LoggerFactory.getLogger(OwnedAssignment.class);

  /** Inbox partitions and ACK-timeout partitions to read. */
  record Wish(Set<Integer> inbox, Set<Integer> timeouts) {
    Wish {
      inbox = Set.copyOf(inbox);
      timeouts = Set.copyOf(timeouts);
    }
  }

  private final org.apache.kafka.clients.consumer.Consumer<String, byte[]> consumer;
  private final String inbox;
  private final String timeouts;
  private final AtomicLongArray seen;
  private final Consumer<Map<Integer, Long>> gained;
  private final CatchUp catchUp = new CatchUp();
  private volatile Wish wish;
  private volatile Set<Integer> reading = Set.of();
  private Wish applied = new Wish(Set.of(), Set.of());

  /**
   * @param seen per inbox partition, the offset of the last record the reader passed (set here for gained ones)
   * @param gained called with each caught-up inbox partition and the offset of its last record before the end
   */
  OwnedAssignment(org.apache.kafka.clients.consumer.Consumer<String, byte[]> consumer, String inbox,
      String timeouts, AtomicLongArray seen, Consumer<Map<Integer, Long>> gained) {
    this.consumer = consumer;
    this.inbox = inbox;
    this.timeouts = timeouts;
    this.seen = seen;
    this.gained = gained;
  }

  void want(Wish next) {
    wish = next;
  }

  /** The inbox partitions whose users can be served here (read and caught up). */
  Set<Integer> reading() {
    return reading;
  }

  /** Nothing assigned: the consumer cannot poll. */
  boolean idle() {
    return applied.inbox().isEmpty() && applied.timeouts().isEmpty();
  }

  /** Whether to route an inbox record (false while its partition is caught up). */
  boolean route(int partition, long offset) {
    return catchUp.route(partition, offset);
  }

  /** Applies the latest wish (reader thread): keeps what stays, catches up what is gained. */
  void reassign() {
    Wish next = wish;
    if (next == null || next.equals(applied)) {
      return;
    }
    List<TopicPartition> all = new ArrayList<>();
    List<TopicPartition> fresh = new ArrayList<>();
    next.inbox().forEach(p -> add(new TopicPartition(inbox, p), !applied.inbox().contains(p), all, fresh));
    next.timeouts().forEach(p -> add(new TopicPartition(timeouts, p), !applied.timeouts().contains(p), all, fresh));
    applied.inbox().stream().filter(p -> !next.inbox().contains(p)).forEach(catchUp::forget);
    consumer.assign(all);
    consumer.seekToEnd(fresh);
    Map<Integer, Long> lastBefore = new TreeMap<>();
    for (TopicPartition tp : fresh) {
      if (tp.topic().equals(inbox)) {
        OptionalLong from = catchUp.start(tp.partition(), consumer.position(tp));
        if (from.isPresent()) {
          consumer.seek(tp, from.getAsLong());
        } else {
          lastBefore.put(tp.partition(), -1L);
        }
      }
    }
    applied = next;
    LOG.info("Push gateway reader: inbox partitions {}, timeout partitions {}", new TreeSet<>(next.inbox()),
        new TreeSet<>(next.timeouts()));
    caughtUp(lastBefore);
  }

  /** After a poll (reader thread): a gained partition read up to its end reads on from there and is served. */
  void afterPoll() {
    Map<Integer, Long> done = new TreeMap<>();
    for (int p : applied.inbox()) {
      if (catchUp.catching(p)) {
        TopicPartition tp = new TopicPartition(inbox, p);
        CatchUp.Step step = catchUp.advanced(p, consumer.position(tp));
        if (step != null) {
          consumer.seek(tp, step.seekTo());
          if (step.done()) {
            done.put(p, step.lastBefore());
          }
        }
      }
    }
    caughtUp(done);
  }

  private void caughtUp(Map<Integer, Long> lastBefore) {
    lastBefore.forEach((p, offset) -> seen.accumulateAndGet(p, offset, Math::max));
    Set<Integer> served = new TreeSet<>(applied.inbox());
    served.removeIf(catchUp::catching);
    reading = Set.copyOf(served);
    if (!lastBefore.isEmpty()) {
      gained.accept(lastBefore);
    }
  }

  private static void add(TopicPartition tp, boolean isNew, List<TopicPartition> all, List<TopicPartition> fresh) {
    all.add(tp);
    if (isNew) {
      fresh.add(tp);
    }
  }
}
