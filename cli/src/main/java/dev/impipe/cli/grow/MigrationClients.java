package dev.impipe.cli.grow;

import dev.impipe.runtime.config.ImConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** The migration's Kafka clients and the offset reads {@link InboxGrow} and {@code inbox status} share. */
final class MigrationClients {

  private MigrationClients() {}

  static Map<String, Object> producer(ImConfig config, String transactionalId) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    props.put(ProducerConfig.CLIENT_ID_CONFIG, transactionalId);
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return props;
  }

  /** A read_committed consumer of the migration's group (offsets committed only inside its transactions). */
  static Map<String, Object> consumer(ImConfig config, String groupId, int maxPollRecords) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    props.put(ConsumerConfig.CLIENT_ID_CONFIG, groupId + "-reader");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPollRecords);
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    return props;
  }

  /** A read_committed consumer without a group, for reading a topic whole. */
  static Map<String, Object> reader(ImConfig config) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    return props;
  }

  static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, Collection<String> topics) {
    List<TopicPartition> out = new ArrayList<>();
    for (String topic : topics) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
      if (infos == null || infos.isEmpty()) {
        throw new IllegalStateException("topic " + topic + " does not exist");
      }
      infos.forEach(i -> out.add(new TopicPartition(topic, i.partition())));
    }
    return out;
  }

  /** Log start, the group's committed offset and the end of every partition of {@code topics}. */
  static CopyProgress progress(KafkaConsumer<?, ?> consumer, Collection<String> topics) {
    List<TopicPartition> tps = partitions(consumer, topics);
    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.copyOf(tps), Duration.ofSeconds(60));
    Map<TopicPartition, Long> start = consumer.beginningOffsets(tps, Duration.ofSeconds(30));
    Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
    Map<TopicPartition, CopyProgress.Partition> out = new HashMap<>();
    for (TopicPartition tp : tps) {
      OffsetAndMetadata c = committed.get(tp);
      out.put(tp, new CopyProgress.Partition(start.get(tp), c == null ? OptionalLong.empty()
          : OptionalLong.of(c.offset()), end.get(tp)));
    }
    return new CopyProgress(out);
  }

  /** Every partition of {@code topics} from its log start to its end now, ignoring committed offsets. */
  static CopyProgress fromStart(KafkaConsumer<?, ?> consumer, Collection<String> topics) {
    List<TopicPartition> tps = partitions(consumer, topics);
    Map<TopicPartition, Long> start = consumer.beginningOffsets(tps, Duration.ofSeconds(30));
    Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
    Map<TopicPartition, CopyProgress.Partition> out = new HashMap<>();
    tps.forEach(tp -> out.put(tp, new CopyProgress.Partition(start.get(tp), OptionalLong.empty(), end.get(tp))));
    return new CopyProgress(out);
  }

  /** Reads every partition of {@code range} from its resume point to its end, in offset order per partition. */
  static void readAll(KafkaConsumer<byte[], byte[]> consumer, CopyProgress range,
      Consumer<ConsumerRecord<byte[], byte[]>> each) {
    consumer.assign(range.partitions().keySet());
    range.partitions().forEach((tp, p) -> consumer.seek(tp, p.resumeAt()));
    while (!range.partitions().entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue().end())) {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        if (r.offset() < range.partitions().get(new TopicPartition(r.topic(), r.partition())).end()) {
          each.accept(r);
        }
      }
    }
  }
}
