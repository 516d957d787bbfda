package dev.impipe.ack.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.avro.Ack;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.Delivery;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wheel on the real broker: thousands of deliveries, a known subset never ACKed, timeouts read read_committed
 * (on time by their record timestamp and by when the reader saw them); then the app is killed (SIGKILL, in its own
 * JVM) while its punctuations are firing a batch of timers spread over four seconds, and restarted: every timer
 * fires, once, none early.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class AckWheelIT {

  private static final Duration TICK = Duration.ofMillis(500);
  private static final Duration TIMEOUT = Duration.ofSeconds(4);
  private static final int USERS = 40;

  private static ItEnvironment.Endpoints env;

  @TempDir
  Path work;

  @BeforeAll
  static void environment() {
    env = ItEnvironment.get();
  }

  static ImTopics createTopics(ItEnvironment.Endpoints env, String prefix) {
    ImConfig config = ImConfig.fromEnv(Map.of("IM_CONVERSATION_PARTITIONS", "3", "IM_USER_PARTITIONS", "3"))
        .withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(TopicNames.withPrefix(prefix), config));
    }
    return WheelApps.topics(prefix, env.schemaRegistryUrl());
  }

  @Test
  void exactlyTheUnackedSeqsTimeOutOnceOnTimeAndSurviveAKill() throws Exception {
    String prefix = ItEnvironment.unique("wheel") + ".";
    String appId = prefix + "ack-timeout";
    String instance = appId + "-instance";
    Path state = Files.createDirectories(work.resolve("state"));
    ImTopics topics = createTopics(env, prefix);
    Map<String, Instant> deadlines = new HashMap<>();
    Set<String> expected = new java.util.HashSet<>();

    Process child = startChild(prefix, appId, state, instance);
    try (KafkaProducer<String, Object> producer = producer(topics);
        TimeoutReader reader = new TimeoutReader(env.bootstrapServers(), topics)) {
      // Given the wheel running in its own JVM
      awaitChildRunning(child);

      // When 2,000 deliveries go out (40 users x phone, tablet x seqs 1..25); every phone and 4 of 5 tablets ACK
      // 10 and then 20 (cumulative); the tablets of every 5th user never ACK
      for (int u = 0; u < USERS; u++) {
        for (String device : List.of("phone", "tablet")) {
          boolean neverAcks = device.equals("tablet") && u % 5 == 0;
          for (long seq = 1; seq <= 25; seq++) {
            deliver(producer, topics, deadlines, user(u), device, seq);
            if (neverAcks || seq > 20) {
              expected.add(id(user(u), device, seq));
            }
          }
          if (!neverAcks) {
            ack(producer, topics, user(u), device, 10);
            ack(producer, topics, user(u), device, 20);
          }
        }
      }
      producer.flush();
      assertThat(expected).hasSize(72 * 5 + 8 * 25);

      // Then exactly that subset times out, each seq once, between its deadline and a few ticks later
      List<Timed> phase1 = reader.readUntil(expected.size(), TIMEOUT.plus(Duration.ofSeconds(30)));
      // ... and nothing more: once the wheel has committed all its input, read to the end of the output
      awaitCommitted(appId, topics);
      reader.readToEnd(Duration.ofSeconds(30));
      phase1 = reader.records();
      int phase1Records = phase1.size();
      assertThat(reader.seqs()).containsExactlyInAnyOrderElementsOf(expected);
      List<Long> lateness = lateness(phase1, deadlines);
      // (two ticks is the design; a wall-clock punctuation on a loaded 2-core runner -- the build runs two modules at
      // once -- can start a few hundred ms late, so the bound allows four: a wheel that skipped a tick or waited for
      // anything slower than its tick would still fail it)
      assertThat(lateness).allSatisfy(ms -> assertThat(ms).isBetween(0L, 4 * TICK.toMillis()));
      // Never early for the reader either: a read_committed consumer sees each timeout at or after its deadline
      assertThat(seenLateness(phase1, deadlines)).allSatisfy(ms -> assertThat(ms).isNotNegative());
      System.out.printf("[AckWheelIT] %d seqs in %d AckTimeouts; lateness ms: min %d, p50 %d, p99 %d, max %d "
          + "(tick %d ms)%n", expected.size(), phase1.size(), lateness.get(0), pct(lateness, 50), pct(lateness, 99),
          lateness.get(lateness.size() - 1), TICK.toMillis());

      // Given 400 more deliveries (phones, seqs 101..110) pushed at moments spread over the next 4 s, so their
      // deadlines fall due one after another over 4 s; even users ACK 105, odd users never
      Set<String> expected2 = new java.util.HashSet<>();
      long base = System.currentTimeMillis();
      for (int u = 0; u < USERS; u++) {
        for (long seq = 101; seq <= 110; seq++) {
          long pushedAt = base + (u * 10L + (seq - 101)) * 10;
          deliver(producer, topics, deadlines, user(u), "phone", seq, Instant.ofEpochMilli(pushedAt));
          if (u % 2 == 1 || seq > 105) {
            expected2.add(id(user(u), "phone", seq));
          }
        }
        if (u % 2 == 0) {
          ack(producer, topics, user(u), "phone", 105);
        }
      }
      producer.flush();
      awaitCommitted(appId, topics);
      // When the wheel has fired a quarter of them, it is killed: its punctuations are mid-way through the batch
      reader.readUntil(expected.size() + expected2.size() / 4, Duration.ofSeconds(60));
      child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      reader.readToEnd(Duration.ofSeconds(30));
      int firedBeforeKill = reader.seqs().size() - expected.size();
      assertThat(firedBeforeKill).as("phase-2 timeouts fired before the kill").isPositive()
          .isLessThan(expected2.size());

      // Then a restarted instance (same state dir, same application id) fires every other pending timer, once
      try (KafkaStreams restarted = WheelApps.startAndAwaitRunning(topics,
          AckTimeoutConfig.defaults().withTiming(TICK, TIMEOUT), new SimpleMeterRegistry(),
          WheelApps.properties(env.bootstrapServers(), topics.names(), appId, state, instance))) {
        reader.readUntil(expected.size() + expected2.size(), Duration.ofSeconds(60));
        Instant lastDeadline = expected2.stream().map(deadlines::get).max(Instant::compareTo).orElseThrow();
        // ... and nothing more: past the last deadline plus two ticks, every input committed, output read to its end
        Awaitility.await("last deadline plus two ticks").atMost(Duration.ofSeconds(30))
            .until(() -> Instant.now().isAfter(lastDeadline.plus(TICK.multipliedBy(2))));
        awaitCommitted(appId, topics);
        reader.readToEnd(Duration.ofSeconds(30));
        List<Timed> phase2 = reader.records();
        Set<String> all = new java.util.HashSet<>(expected);
        all.addAll(expected2);
        assertThat(reader.seqs()).containsExactlyInAnyOrderElementsOf(all);
        List<Timed> afterPhase1 = phase2.subList(phase1Records, phase2.size());
        List<Long> late2 = lateness(afterPhase1, deadlines);
        assertThat(late2).allSatisfy(ms -> assertThat(ms).isNotNegative());
        assertThat(seenLateness(afterPhase1, deadlines)).allSatisfy(ms -> assertThat(ms).isNotNegative());
        assertThat(restarted.state()).isEqualTo(KafkaStreams.State.RUNNING);
        System.out.printf("[AckWheelIT] killed after %d of %d phase-2 timeouts; after restart all fired once; "
            + "lateness ms: min %d, max %d%n", firedBeforeKill, expected2.size(), late2.get(0),
            late2.get(late2.size() - 1));
      }
    } finally {
      child.destroyForcibly();
    }
  }

  // --- helpers ---

  static String user(int u) {
    return String.format(java.util.Locale.ROOT, "user-%02d", u);
  }

  static String id(String user, String device, long seq) {
    return user + "/" + device + "#" + seq;
  }

  private static KafkaProducer<String, Object> producer(ImTopics topics) {
    Map<String, Object> props = Map.of("bootstrap.servers", env.bootstrapServers(), "linger.ms", 5);
    @SuppressWarnings({"unchecked", "rawtypes"})
    org.apache.kafka.common.serialization.Serializer<Object> values = (topic, data) -> data instanceof Delivery
        ? ((org.apache.kafka.common.serialization.Serializer) topics.deliveries().valueSerde().serializer())
            .serialize(topic, data)
        : ((org.apache.kafka.common.serialization.Serializer) topics.acks().valueSerde().serializer())
            .serialize(topic, data);
    return new KafkaProducer<>(props, new StringSerializer(), values);
  }

  private static void deliver(KafkaProducer<String, Object> producer, ImTopics topics, Map<String, Instant> deadlines,
      String user, String device, long seq) {
    deliver(producer, topics, deadlines, user, device, seq, Instant.now());
  }

  private static void deliver(KafkaProducer<String, Object> producer, ImTopics topics, Map<String, Instant> deadlines,
      String user, String device, long seq, Instant pushedAt) {
    deadlines.put(id(user, device, seq), pushedAt.plus(TIMEOUT));
    producer.send(new ProducerRecord<>(topics.deliveries().name(), user, Delivery.newBuilder().setUserId(user)
        .setDeviceId(device).setSeq(seq).setPushedAt(pushedAt).setAttempt(1).build()));
  }

  private static void ack(KafkaProducer<String, Object> producer, ImTopics topics, String user, String device,
      long seq) {
    producer.send(new ProducerRecord<>(topics.acks().name(), user, Ack.newBuilder().setUserId(user)
        .setDeviceId(device).setSeq(seq).setAckedAt(Instant.now()).build()));
  }

  /** Lateness of every seq (emit time minus its own deadline), sorted. */
  private static List<Long> lateness(List<Timed> timeouts, Map<String, Instant> deadlines) {
    List<Long> out = new ArrayList<>();
    for (Timed t : timeouts) {
      for (long seq : t.value().getSeqs()) {
        Instant deadline = deadlines.get(id(t.value().getUserId(), t.value().getDeviceId(), seq));
        out.add(t.emittedAt() - deadline.toEpochMilli());
      }
    }
    out.sort(null);
    return out;
  }

  /** When the reader saw each seq minus its deadline, sorted. */
  private static List<Long> seenLateness(List<Timed> timeouts, Map<String, Instant> deadlines) {
    List<Long> out = new ArrayList<>();
    for (Timed t : timeouts) {
      for (long seq : t.value().getSeqs()) {
        out.add(t.seenAt() - deadlines.get(id(t.value().getUserId(), t.value().getDeviceId(), seq)).toEpochMilli());
      }
    }
    out.sort(null);
    return out;
  }

  private static long pct(List<Long> sorted, int percentile) {
    return sorted.get(Math.min(sorted.size() - 1, sorted.size() * percentile / 100));
  }

  private void awaitCommitted(String groupId, ImTopics topics) {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (String topic : List.of(topics.deliveries().name(), topics.acks().name())) {
        for (int p = 0; p < 3; p++) {
          latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
      }
      Awaitility.await("wheel committed every input").atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(50)).until(() -> {
            Map<TopicPartition, Long> ends = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
            admin.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
            Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata().get();
            return ends.entrySet().stream().allMatch(e -> e.getValue() == 0
                || (committed.get(e.getKey()) != null && committed.get(e.getKey()).offset() >= e.getValue()));
          });
    }
  }

  private Process startChild(String prefix, String appId, Path state, String instance) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Path log = work.resolve("child.log");
    return new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
        WheelChildMain.class.getName(), env.bootstrapServers(), env.schemaRegistryUrl(), prefix, appId,
        state.toString(), instance, Long.toString(TICK.toMillis()), Long.toString(TIMEOUT.toMillis()))
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  private void awaitChildRunning(Process child) {
    Path log = work.resolve("child.log");
    Awaitility.await("child wheel RUNNING").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
        .until(() -> {
          if (!child.isAlive()) {
            throw new AssertionError("child JVM died:\n" + Files.readString(log));
          }
          return Files.exists(log) && Files.readAllLines(log).contains("RUNNING");
        });
  }

  /** An AckTimeout record, the time the wheel emitted it (its record timestamp) and when the reader got it. */
  record Timed(AckTimeout value, long emittedAt, long seenAt) {}
}
