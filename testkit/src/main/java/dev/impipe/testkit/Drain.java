package dev.impipe.testkit;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Crash tests look for late duplicates by reading everything there is, not by listening for a while: first the app
 * has caught up (its group has committed every input offset, so under exactly-once its output for that input is
 * committed too), then the output is read up to its end offsets (read_committed: the last stable offset).
 */
public final class Drain {

  private Drain() {}

  /** Waits until consumer group {@code groupId} has committed the end offset of every partition of {@code inputs}. */
  public static void awaitCaughtUp(String bootstrap, String groupId, Collection<String> inputs, Duration atMost) {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      await("group " + groupId + " committed all of " + inputs).atMost(atMost).pollInterval(Duration.ofMillis(100))
          .until(() -> lag(admin, groupId, inputs) == 0);
    }
  }

  /** Records of {@code inputs} not yet committed by {@code groupId} (a partition it never committed counts whole). */
  public static long lag(Admin admin, String groupId, Collection<String> inputs) throws Exception {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    admin.describeTopics(inputs).allTopicNames().get().forEach((topic, description) -> description.partitions()
        .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest())));
    Map<TopicPartition, OffsetAndMetadata> committed =
        admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata().get();
    long lag = 0;
    for (var e : admin.listOffsets(latest).all().get().entrySet()) {
      OffsetAndMetadata c = committed.get(e.getKey());
      lag += Math.max(0, e.getValue().offset() - (c == null ? 0 : c.offset()));
    }
    return lag;
  }

  /**
   * Every record of {@code topic} from the beginning up to its end offsets as of now; the consumer must be
   * read_committed and unsubscribed (it is assigned every partition here).
   */
  public static <K, V> List<ConsumerRecord<K, V>> readToEnd(KafkaConsumer<K, V> consumer, String topic,
      Duration atMost) {
    List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
        .map(p -> new TopicPartition(topic, p.partition())).toList();
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
    List<ConsumerRecord<K, V>> out = new ArrayList<>();
    await("read " + topic + " to its end offsets " + end).atMost(atMost).until(() -> {
      consumer.poll(Duration.ofMillis(200)).forEach(out::add);
      return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
    });
    return out;
  }
}
