package dev.impipe.runtime.domain;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.utils.Utils;

/**
 * The key of a record in the history topic: {@code <conversationId>|<conversation seq>} (decimal). One key per
 * conversation seq, so the topic can be compacted: a recall's overwrite (body removed) replaces the original for good,
 * and a seq the fan-out did not accept is a tombstone. {@code |} is in no id, so the last one splits the key.
 *
 * <p>Records are partitioned by the conversation id alone ({@link #partition}), exactly as {@code im.messages} is
 * by its key, so history partition p holds the conversations of {@code im.messages} partition p.
 */
public final class HistoryKey {

  private static final char SEPARATOR = '|';

  private HistoryKey() {}

  public static String of(String conversationId, long seq) {
    return conversationId + SEPARATOR + seq;
  }

  public static String conversation(String key) {
    return key.substring(0, separator(key));
  }

  public static long seq(String key) {
    return Long.parseLong(key.substring(separator(key) + 1));
  }

  /** The partition of a history key: Kafka's default partitioner applied to the conversation id alone. */
  public static int partition(String key, int partitions) {
    byte[] conversation = conversation(key).getBytes(StandardCharsets.UTF_8);
    return Utils.toPositive(Utils.murmur2(conversation)) % partitions;
  }

  /** As a Streams partitioner of the history topic's sink ({@code HistoryKey::partitions}). */
  public static Optional<Set<Integer>> partitions(String topic, String key, Object value, int partitions) {
    return Optional.of(Set.of(partition(key, partitions)));
  }

  private static int separator(String key) {
    int at = key.lastIndexOf(SEPARATOR);
    if (at <= 0 || at == key.length() - 1) {
      throw new IllegalArgumentException("not a history key (conversationId|seq): '" + key + "'");
    }
    return at;
  }
}
