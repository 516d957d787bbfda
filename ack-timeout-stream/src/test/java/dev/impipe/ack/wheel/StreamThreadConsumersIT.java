package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.InputLag;
import dev.impipe.runtime.streams.StreamThreadConsumers;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.testkit.ItEnvironment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link StreamThreadConsumers.EndOffsets#ends} against a real consumer on the real broker: the consumer's cached lag is
 * that of its last fetch, so the end offset must come from the broker. This is what let the ACK wheel fire
 * while ACKs sat at the broker (the push benchmark's false timeouts).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class StreamThreadConsumersIT {

  @Test
  void recordsWrittenSinceTheConsumersLastFetchCountAsUnprocessed() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String topic = ItEnvironment.unique("lag");
    TopicPartition tp = new TopicPartition(topic, 0);
    createTopic(env, topic);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, env.bootstrapServers(),
        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true), new ByteArraySerializer(), new ByteArraySerializer());
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, env.bootstrapServers(),
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
            new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      // Given 5 records, all read and processed (last processed offset 4)
      send(producer, topic, 5);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
        consumer.poll(Duration.ofMillis(100)).forEach(read::add);
        return read.size() == 5 && consumer.currentLag(tp).isPresent();
      });
      assertThat(read.get(4).offset()).isEqualTo(4);
      AtomicLong clock = new AtomicLong(1_000);
      StreamThreadConsumers.EndOffsets ends = new StreamThreadConsumers.EndOffsets(clock::get);
      assertThat(ends.ends(consumer, tp, 1_000)).contains(new InputLag.Ends(5, 5));

      // When 3 more records are written and the consumer has not polled since
      send(producer, topic, 3);

      // Then a question about a time before they were written is answered from the ends asked then (one request
      // per punctuation round of a stream thread, whatever its number of tasks)
      assertThat(ends.ends(consumer, tp, 1_000)).contains(new InputLag.Ends(5, 5));
      // and one about a later time sees them at the broker: the consumer's cached lag still says 0 here (seen on
      // Kafka 4.3.1: its last fetch saw the end at 5)
      clock.set(1_001);
      assertThat(consumer.currentLag(tp)).hasValue(0);
      assertThat(ends.ends(consumer, tp, 1_001)).contains(new InputLag.Ends(8, 5));
    }
  }

  @Test
  void anIdleConsumersEndOffsetsWaitBehindItsFetchForTheFetchWaitOnly() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String topic = ItEnvironment.unique("idle");
    TopicPartition tp = new TopicPartition(topic, 0);
    createTopic(env, topic);
    // Given a caught-up consumer with Kafka's default fetch wait (500 ms), and one with the wheel app's
    Object wheelWait = AckTimeoutComponent.overrides(AckTimeoutConfig.defaults())
        .get(StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG));
    // When each asks for the end offsets right after a poll that found nothing (its next fetch waits at the broker)
    long defaultMs = slowestEnds(env, tp, Map.of());
    long wheelMs = slowestEnds(env, tp, Map.of(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, wheelWait));
    // Then the request waits for that fetch to be answered on the same connection: about half a second with the
    // default (every slot-boundary round of an idle wheel, so timeouts came a tick late), far less with the wheel's
    System.out.printf("[StreamThreadConsumersIT] end offsets of an idle consumer: %d ms with the default fetch wait, "
        + "%d ms with the wheel's (%s ms)%n", defaultMs, wheelMs, wheelWait);
    assertThat(defaultMs).isGreaterThanOrEqualTo(300);
    assertThat(wheelMs).isLessThan(300);
  }

  /** The longest of a few end-offset requests, each right after an empty poll of a caught-up consumer, in ms. */
  private static long slowestEnds(ItEnvironment.Endpoints env, TopicPartition tp, Map<String, Object> extra) {
    Map<String, Object> props = new HashMap<>(Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, env.bootstrapServers(),
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
    props.putAll(extra);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
        new ByteArrayDeserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
        consumer.poll(Duration.ofMillis(50));
        return consumer.currentLag(tp).isPresent();
      });
      long slowest = 0;
      for (int i = 0; i < 3; i++) {
        consumer.poll(Duration.ofMillis(50));
        StreamThreadConsumers.EndOffsets ends = new StreamThreadConsumers.EndOffsets(System::currentTimeMillis);
        long start = System.nanoTime();
        assertThat(ends.ends(consumer, tp, System.currentTimeMillis())).contains(new InputLag.Ends(0, 0));
        slowest = Math.max(slowest, (System.nanoTime() - start) / 1_000_000);
      }
      return slowest;
    }
  }

  private static void createTopic(ItEnvironment.Endpoints env, String topic) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
  }

  private static void send(KafkaProducer<byte[], byte[]> producer, String topic, int count) throws Exception {
    for (int i = 0; i < count; i++) {
      producer.send(new ProducerRecord<>(topic, 0, null, new byte[] {(byte) i})).get(30, TimeUnit.SECONDS);
    }
  }
}
