package dev.impipe.notify.send;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * At-least-once commits for one partition whose records finish out of order: the committable offset is the lowest
 * offset not finished (everything below it is), or one past the highest seen when all are finished.
 */
public final class PartitionOffsets {

  private final TreeSet<Long> unfinished = new TreeSet<>();
  private long highestSeen = -1;

  /** A record at {@code offset} is being worked on. */
  public void started(long offset) {
    unfinished.add(offset);
    highestSeen = Math.max(highestSeen, offset);
  }

  /** The record at {@code offset} is finished (sent, removed or rejected). */
  public void finished(long offset) {
    unfinished.remove(offset);
  }

  /** The offset to commit (the next record to read after a restart), empty before the first record. */
  public OptionalLong committable() {
    if (!unfinished.isEmpty()) {
      return OptionalLong.of(unfinished.first());
    }
    return highestSeen < 0 ? OptionalLong.empty() : OptionalLong.of(highestSeen + 1);
  }

  /** Records started and not finished. */
  public int unfinished() {
    return unfinished.size();
  }

  /**
   * The offsets to commit for {@code partitions}: each one's committable offset where it differs from what
   * {@code committed} says was committed last.
   */
  public static Map<TopicPartition, OffsetAndMetadata> due(Map<TopicPartition, PartitionOffsets> offsets,
      Collection<TopicPartition> partitions, Map<TopicPartition, Long> committed) {
    Map<TopicPartition, OffsetAndMetadata> due = new HashMap<>();
    for (TopicPartition tp : partitions) {
      PartitionOffsets o = offsets.get(tp);
      if (o != null) {
        o.committable().ifPresent(offset -> {
          if (!Long.valueOf(offset).equals(committed.get(tp))) {
            due.put(tp, new OffsetAndMetadata(offset));
          }
        });
      }
    }
    return due;
  }
}
