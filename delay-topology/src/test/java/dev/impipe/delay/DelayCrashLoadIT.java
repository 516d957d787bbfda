package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.testkit.ChildPipeline;
import dev.impipe.testkit.Drain;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tens of thousands of schedules spread over half a minute plus a burst due in one millisecond, with the app killed
 * (SIGKILL, in its own JVM) in the middle of delivering them and started again: every record arrives exactly once
 * and none early. Prints the measured lateness.
 */
@Timeout(value = 12, unit = TimeUnit.MINUTES)
class DelayCrashLoadIT {

  private static final int SPREAD = 20_000;
  private static final int BURST = 10_000;

  @TempDir
  Path work;

  @Test
  void everyScheduleIsDeliveredExactlyOnceAndNeverEarlyAcrossAKill() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("delayload") + ".";
    Map<String, String> vars = new HashMap<>(Map.of("IM_TOPIC_PREFIX", prefix, "IM_CONVERSATION_PARTITIONS", "3",
        "IM_USER_PARTITIONS", "3", "IM_HTTP_PORT", "0", "KAFKA_SESSION_TIMEOUT_MS", "6000",
        "IM_STATE_DIR", work.resolve("state").toString(), "KAFKA_BOOTSTRAP_SERVERS", env.bootstrapServers(),
        "SCHEMA_REGISTRY_URL", env.schemaRegistryUrl()));
    ImConfig config = ImConfig.fromEnv(vars);
    TopicNames names = TopicNames.withPrefix(prefix);
    String out = prefix + "load-out";
    vars.put(DelayConfig.IM_DELAY_TARGETS, out);
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
      admin.createTopics(List.of(new NewTopic(out, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));

    // Given: the app runs in a JVM of its own
    ChildPipeline app = ChildPipeline.start(DelayComponent.class, vars, work.resolve("app-1.log"));
    Map<String, Long> dueById = new HashMap<>();
    // When: SPREAD schedules fall due over 25 s from 10 s on, and BURST all in the same millisecond at 20 s
    Instant start = Instant.now();
    long spreadFrom = start.plusSeconds(10).toEpochMilli();
    long burstAt = start.plusSeconds(20).toEpochMilli();
    try (KafkaProducer<String, ScheduleCommand> producer = producer(config, topics)) {
      for (int i = 0; i < SPREAD + BURST; i++) {
        String id = "s" + i;
        long due = i < SPREAD ? spreadFrom + (long) i * 25_000 / SPREAD : burstAt;
        dueById.put(id, due);
        ScheduleCommand command = ScheduleCommand.newBuilder().setId(id).setOp(ScheduleOp.SCHEDULE)
            .setDeliverAt(Instant.ofEpochMilli(due)).setTargetTopic(out)
            .setKey(ByteBuffer.wrap(id.getBytes(StandardCharsets.UTF_8)))
            .setValue(ByteBuffer.wrap(id.getBytes(StandardCharsets.UTF_8))).setHeaders(Map.of()).build();
        producer.send(new ProducerRecord<>(names.delayed(), id, command));
      }
      producer.flush();
    }
    System.out.printf("Produced %d schedules in %d ms%n", SPREAD + BURST,
        Duration.between(start, Instant.now()).toMillis());

    List<long[]> seen = new ArrayList<>();
    Map<String, Integer> counts = new HashMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(config)) {
      consumer.subscribe(Set.of(out));
      // ... and the app is killed while the burst is being delivered
      await().atMost(Duration.ofSeconds(90)).until(() -> {
        poll(consumer, dueById, counts, seen);
        return seen.size() >= SPREAD / 2 + BURST / 4;
      });
      app.kill();
      int beforeKill = seen.size();
      // The kill landed mid-work: what the killed app had delivered (committed) is a part, not all
      poll(consumer, dueById, counts, seen);
      assertThat(counts).as("schedules delivered by the killed app").hasSizeLessThan(SPREAD + BURST);
      // ... and started again on the same state dir
      ChildPipeline again = ChildPipeline.start(DelayComponent.class, vars, work.resolve("app-2.log"));
      try {
        // Then: everything arrives
        await().atMost(Duration.ofSeconds(120)).until(() -> {
          poll(consumer, dueById, counts, seen);
          return counts.size() == SPREAD + BURST;
        });
        // ... and nothing more: once the app has taken in every command and delivered every due one (the
        // scheduled-count gauge is not reachable in a child JVM, so: all delivered, all input committed), read the
        // output to its end offsets
        Drain.awaitCaughtUp(env.bootstrapServers(), prefix + DelayComponent.NAME, List.of(names.delayed()),
            Duration.ofSeconds(60));
        var end = consumer.endOffsets(consumer.assignment());
        await().atMost(Duration.ofSeconds(30)).until(() -> {
          poll(consumer, dueById, counts, seen);
          return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
        });
      } finally {
        again.close();
      }
      System.out.printf("Seen before the kill: %d, after: %d%n", beforeKill, seen.size() - beforeKill);
    }

    // Then: exactly once, none early
    assertThat(counts).hasSize(SPREAD + BURST);
    assertThat(counts.values()).allMatch(c -> c == 1, "delivered exactly once");
    assertThat(seen).filteredOn(s -> s[1] < s[0]).as("records stamped before their time").isEmpty();
    assertThat(seen).filteredOn(s -> s[2] < s[0]).as("records seen before their time").isEmpty();
    long[] lateness = seen.stream().mapToLong(s -> s[1] - s[0]).sorted().toArray();
    long[] seenLateness = seen.stream().mapToLong(s -> s[2] - s[0]).sorted().toArray();
    System.out.printf("Lateness (delivery timestamp - due), ms: p50=%d p99=%d max=%d%n",
        lateness[lateness.length / 2], lateness[(int) (lateness.length * 0.99)], lateness[lateness.length - 1]);
    System.out.printf("Lateness (seen by a read_committed consumer - due), ms: p50=%d p99=%d max=%d%n",
        seenLateness[seenLateness.length / 2], seenLateness[(int) (seenLateness.length * 0.99)],
        seenLateness[seenLateness.length - 1]);
  }

  private static KafkaProducer<String, ScheduleCommand> producer(ImConfig config, ImTopics topics) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("enable.idempotence", true);
    props.put("acks", "all");
    props.put("linger.ms", 20);
    return new KafkaProducer<>(props, topics.delayed().keySerde().serializer(),
        topics.delayed().valueSerde().serializer());
  }

  private static KafkaConsumer<byte[], byte[]> consumer(ImConfig config) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("group.id", ItEnvironment.unique("delay-load"));
    props.put("auto.offset.reset", "earliest");
    props.put("isolation.level", "read_committed");
    return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** Records {due, delivery timestamp, seen at} per delivered record and counts deliveries per id. */
  private static void poll(KafkaConsumer<byte[], byte[]> consumer, Map<String, Long> dueById,
      Map<String, Integer> counts, List<long[]> seen) {
    var records = consumer.poll(Duration.ofMillis(200));
    long now = System.currentTimeMillis();
    for (ConsumerRecord<byte[], byte[]> r : records) {
      String id = new String(r.value(), StandardCharsets.UTF_8);
      counts.merge(id, 1, Integer::sum);
      seen.add(new long[] {dueById.get(id), r.timestamp(), now});
    }
  }
}
