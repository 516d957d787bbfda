package dev.impipe.cli.grow;

import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;

/**
 * How far the copy of one source topic is, from the migration group's committed offsets: where each partition
 * (re)starts and whether it is done. Pure: the shell reads the offsets, this decides.
 */
public final class CopyProgress {

  /** One source partition: its log start, the offset committed by the copy (if any) and its end (read_committed). */
  public record Partition(long logStart, OptionalLong committed, long end) {

    /**
     * Where the copy (re)starts: after the last committed transaction, or the oldest retained record if nothing is
     * committed yet or retention deleted past the committed offset.
     */
    public long resumeAt() {
      return Math.max(logStart, committed.orElse(logStart));
    }

    /** Records still to read (offsets; transaction markers count as one each). */
    public long remaining() {
      return Math.max(0, end - resumeAt());
    }

    public boolean done() {
      return remaining() == 0;
    }
  }

  private final Map<TopicPartition, Partition> partitions;

  public CopyProgress(Map<TopicPartition, Partition> partitions) {
    this.partitions = new TreeMap<>((a, b) -> a.topic().equals(b.topic())
        ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
    this.partitions.putAll(partitions);
  }

  public Map<TopicPartition, Partition> partitions() {
    return partitions;
  }

  public boolean done() {
    return partitions.values().stream().allMatch(Partition::done);
  }

  /** Offsets copied so far out of the offsets retained, over all partitions. */
  public long copied() {
    return partitions.values().stream().mapToLong(p -> p.resumeAt() - p.logStart()).sum();
  }

  public long total() {
    return partitions.values().stream().mapToLong(p -> Math.max(0, p.end() - p.logStart())).sum();
  }

  /** {@code 1200/2400 offsets (50%)}. */
  public String describe() {
    long total = total();
    long copied = copied();
    return copied + "/" + total + " offsets (" + (total == 0 ? 100 : copied * 100 / total) + "%)";
  }
}
