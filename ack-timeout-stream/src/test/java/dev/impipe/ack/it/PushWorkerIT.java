package dev.impipe.ack.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.ack.push.DeviceChannel;
import dev.impipe.ack.push.InMemoryDeviceChannel;
import dev.impipe.ack.push.PushWorker;
import dev.impipe.avro.Delivery;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.testkit.Drain;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The push-worker library end to end: im.inbox -> in-memory devices -> im.deliveries / im.acks -> the wheel. */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class PushWorkerIT {

  private static final Duration TICK = Duration.ofMillis(200);
  private static final Duration TIMEOUT = Duration.ofSeconds(2);

  private static ItEnvironment.Endpoints env;

  @TempDir
  Path state;

  @BeforeAll
  static void environment() {
    env = ItEnvironment.get();
  }

  @Test
  void pushesRecordDeliveriesAndOnlyTheDeviceThatNeverAcksTimesOut() throws Exception {
    // Given the wheel and a push worker; alice's phone ACKs every push at once, her tablet never; bob's laptop is
    // still listed as connected, but its connection is gone: every push to it fails (so it must not be recorded as
    // a Delivery, or it would time out)
    String prefix = ItEnvironment.unique("push") + ".";
    ImTopics topics = AckWheelIT.createTopics(env, prefix);
    InMemoryDeviceChannel devices = new InMemoryDeviceChannel().connect("alice", "phone").connect("alice", "tablet");
    AtomicInteger pushesToBob = new AtomicInteger();
    DeviceChannel channel = new DeviceChannel() {
      @Override
      public Collection<String> connectedDevices(String userId) {
        return userId.equals("bob") ? List.of("laptop") : devices.connectedDevices(userId);
      }

      @Override
      public boolean push(String userId, String deviceId, long seq, InboxEntry entry) {
        if (userId.equals("bob")) {
          pushesToBob.incrementAndGet();
        }
        return devices.push(userId, deviceId, seq, entry);
      }
    };
    Map<String, Object> clients = Map.of("bootstrap.servers", env.bootstrapServers(), "auto.offset.reset", "earliest");
    try (KafkaStreams wheel = WheelApps.startAndAwaitRunning(topics,
        AckTimeoutConfig.defaults().withTiming(TICK, TIMEOUT), new SimpleMeterRegistry(),
        WheelApps.properties(env.bootstrapServers(), topics.names(), prefix + "ack-timeout", state,
            null));
        PushWorker worker = new PushWorker(clients, prefix + "push-worker", topics, channel, Clock.systemUTC())) {
      devices.onPush(p -> {
        if (p.deviceId().equals("phone")) {
          worker.acknowledge(p.userId(), p.deviceId(), p.seq());
        }
      });
      worker.start();

      // When five messages land in alice's inbox and two in bob's
      List<Long> aliceSeqs = new ArrayList<>();
      try (KafkaProducer<String, InboxEntry> producer = new KafkaProducer<>(
          Map.of("bootstrap.servers", env.bootstrapServers()), topics.inbox().keySerde().serializer(),
          topics.inbox().valueSerde().serializer())) {
        for (int i = 1; i <= 5; i++) {
          aliceSeqs.add(producer.send(new ProducerRecord<>(topics.inbox().name(), "alice", entry("alice", i)))
              .get(30, TimeUnit.SECONDS).offset());
        }
        for (int i = 1; i <= 2; i++) {
          producer.send(new ProducerRecord<>(topics.inbox().name(), "bob", entry("bob", i))).get(30, TimeUnit.SECONDS);
        }
      }

      // Then each of alice's devices got the five entries, seq = inbox offset, in order
      Awaitility.await("pushes").atMost(Duration.ofSeconds(30))
          .until(() -> devices.pushes("alice", "tablet").size() == 5 && devices.pushes("alice", "phone").size() == 5);
      assertThat(devices.pushes("alice", "tablet")).extracting(InMemoryDeviceChannel.Push::seq)
          .containsExactlyElementsOf(aliceSeqs);
      assertThat(devices.pushes("alice", "phone")).extracting(p -> p.entry().getBody())
          .containsExactly("hello alice 1", "hello alice 2", "hello alice 3", "hello alice 4", "hello alice 5");
      assertThat(worker.pushes()).isEqualTo(10);
      assertThat(worker.acks()).isEqualTo(5);
      // and one Delivery per push is recorded in im.deliveries
      List<ConsumerRecord<String, Delivery>> deliveries = readAll(topics.deliveries().name(),
          topics.deliveries().valueSerde().deserializer(), 10);
      assertThat(deliveries).extracting(r -> r.value().getDeviceId() + "#" + r.value().getSeq())
          .containsExactlyInAnyOrderElementsOf(aliceSeqs.stream().flatMap(s -> List.of("phone#" + s, "tablet#" + s)
              .stream()).toList());
      // and the wheel times out the tablet's five seqs, nothing of the phone's, nothing of bob's: once a timeout
      // has passed since the worker tried bob's entries and the wheel has committed all of its input, the timeouts
      // topic is read to its end
      try (TimeoutReader reader = new TimeoutReader(env.bootstrapServers(), topics)) {
        reader.readUntil(5, TIMEOUT.plus(Duration.ofSeconds(30)));
        Awaitility.await("the worker tried bob's two entries").atMost(Duration.ofSeconds(30))
            .until(() -> pushesToBob.get() == 2);
        // a Delivery recorded for bob would fall due one timeout after its push: wait that out, then read to the end
        Instant due = Instant.now().plus(TIMEOUT).plus(TICK.multipliedBy(2));
        Awaitility.await("one timeout and two ticks").atMost(TIMEOUT.multipliedBy(3))
            .until(() -> Instant.now().isAfter(due));
        Drain.awaitCaughtUp(env.bootstrapServers(), prefix + "ack-timeout", List.of(topics.deliveries().name(),
            topics.acks().name()), Duration.ofSeconds(30));
        reader.readToEnd(Duration.ofSeconds(30));
        assertThat(reader.seqs()).containsExactlyInAnyOrderElementsOf(
            aliceSeqs.stream().map(s -> AckWheelIT.id("alice", "tablet", s)).toList());
      }
      assertThat(wheel.state()).isEqualTo(KafkaStreams.State.RUNNING);
    }
  }

  private static InboxEntry entry(String user, int i) {
    return InboxEntry.newBuilder().setUserId(user).setType(InboxEntryType.MESSAGE).setConversationId("d:alice:bob")
        .setConversationSeq(i).setMessageId("m-" + user + "-" + i).setSenderId("carol")
        .setBody("hello " + user + " " + i)
        .setTimestamp(Instant.now()).build();
  }

  private static <V> List<ConsumerRecord<String, V>> readAll(String topic,
      org.apache.kafka.common.serialization.Deserializer<V> values, int expected) {
    List<ConsumerRecord<String, V>> out = new ArrayList<>();
    try (KafkaConsumer<String, V> consumer = new KafkaConsumer<>(Map.of("bootstrap.servers", env.bootstrapServers(),
        "isolation.level", "read_committed"), new org.apache.kafka.common.serialization.StringDeserializer(),
        values)) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
          .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (out.size() < expected && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(100)).forEach(out::add);
      }
    }
    return out;
  }
}
