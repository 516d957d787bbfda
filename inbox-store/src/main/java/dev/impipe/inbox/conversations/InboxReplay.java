package dev.impipe.inbox.conversations;

import dev.impipe.avro.InboxEntry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsException;

/**
 * Reads a stretch of an inbox partition again, for a conversation list whose store lags the committed input (its
 * last checkpoint, see {@link ConversationMaterialiser}): a consumer of its own, configured as Kafka Streams' restore
 * consumer (the app's connection and security settings; read_committed under exactly-once), assigned the one
 * partition, from the first offset after the checkpoint up to the committed offset.
 */
final class InboxReplay {

  /** How long a replay may take before the task's initialisation fails (and Kafka Streams tries it again). */
  static final Duration TIMEOUT = Duration.ofMinutes(5);

  /** Where a replayed entry goes. */
  interface Sink {
    void apply(long offset, String user, InboxEntry entry);
  }

  private final Deserializer<String> keys;
  private final Deserializer<InboxEntry> values;

  InboxReplay(Deserializer<String> keys, Deserializer<InboxEntry> values) {
    this.keys = keys;
    this.values = values;
  }

  /**
   * Hands {@code sink} every entry of {@code tp} in [{@code from}, {@code to}) in offset order (records that do not
   * deserialize are skipped, as the list's processor skipped them); returns how many it handed.
   */
  long replay(Map<String, Object> appConfigs, String clientId, TopicPartition tp, long from, long to, Sink sink) {
    Map<String, Object> props = new StreamsConfig(appConfigs).getRestoreConsumerConfigs(clientId);
    // Entries removed by retention since the checkpoint cannot be replayed; the list goes on from the oldest kept.
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    // A stretch that ends in a transaction marker has no record to wait for: do not hold each fetch 500 ms.
    props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 20);
    long handed = 0;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
        new ByteArrayDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seek(tp, from);
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (consumer.position(tp) < to) {
        if (System.nanoTime() - deadline > 0) {
          throw new StreamsException("replaying " + tp + " from " + from + " to " + to + " for the conversation "
              + "list took longer than " + TIMEOUT + " (at " + consumer.position(tp) + ")");
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.offset() >= to) {
            break;
          }
          String user;
          InboxEntry entry;
          try {
            user = r.key() == null ? null : keys.deserialize(tp.topic(), r.headers(), r.key());
            entry = r.value() == null ? null : values.deserialize(tp.topic(), r.headers(), r.value());
          } catch (RuntimeException unreadable) {
            continue;
          }
          sink.apply(r.offset(), user, entry);
          handed++;
        }
      }
    }
    return handed;
  }
}
