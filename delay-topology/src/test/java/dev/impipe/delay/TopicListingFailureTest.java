package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.delay.internal.AdminTopicCache;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The delay topology asks whether a target topic exists without blocking, and a listing that failed means "try again
 * later", never "does not exist": after a restart with the broker's topic list unavailable, the overdue backlog waits
 * and is then delivered, none of it rejected.
 */
class TopicListingFailureTest {

  private static final Instant T0 = Instant.parse("2026-03-01T12:00:00.250Z");

  @TempDir
  Path stateDir;

  private final String registry = "mock://delay-listing-" + UUID.randomUUID();
  private final ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registry));
  private final AtomicLong now = new AtomicLong(T0.toEpochMilli());
  private final AtomicBoolean brokerAnswers = new AtomicBoolean(false);
  private final AtomicInteger listings = new AtomicInteger();
  private TopologyTestDriver driver;

  @AfterEach
  void tearDown() {
    driver.close();
    InMemorySchemaRegistry.drop(registry);
  }

  @Test
  void aFailedTopicListingDelaysTheOverdueBacklogAndNeverRejectsIt() {
    AdminTopicCache cache = new AdminTopicCache(() -> {
      listings.incrementAndGet();
      return brokerAnswers.get() ? CompletableFuture.completedFuture(Set.of("im.messages"))
          : CompletableFuture.failedFuture(new org.apache.kafka.common.errors.TimeoutException("broker away"));
    }, 30_000, now::get);
    start(cache);
    TestInputTopic<String, ScheduleCommand> delayed = driver.createInputTopic("im.delayed", new StringSerializer(),
        topics.delayed().valueSerde().serializer());
    TestOutputTopic<byte[], byte[]> messages = driver.createOutputTopic("im.messages", new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
    TestOutputTopic<byte[], byte[]> rejected = driver.createOutputTopic("im.rejected", new ByteArrayDeserializer(),
        new ByteArrayDeserializer());

    // Given 3 records due at 1 s, accepted while the broker cannot list its topics
    for (int i = 0; i < 3; i++) {
      delayed.pipeInput("s" + i, schedule("s" + i, T0.plusSeconds(1), "im.messages"), T0);
    }
    // When they come due (now = 5 s) and every listing fails
    advance(Duration.ofSeconds(5));
    // Then none is delivered and none is rejected, and the cache asked again (about once a second, not per record)
    assertThat(messages.isEmpty()).isTrue();
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(listings.get()).isBetween(2, 7);

    // When the broker answers again (now = 7 s)
    brokerAnswers.set(true);
    advance(Duration.ofSeconds(2));
    // Then the backlog is delivered, once each, in due order; still nothing rejected
    assertThat(messages.readKeyValuesToList()).extracting(kv -> new String(kv.key, StandardCharsets.UTF_8))
        .containsExactly("k-s0", "k-s1", "k-s2");
    assertThat(rejected.isEmpty()).isTrue();

    // And a topic a successful listing does not hold is still rejected as missing, at the latest when due (20 s)
    delayed.pipeInput("s9", schedule("s9", T0.plusSeconds(20), "im.nope"), T0.plusSeconds(7));
    advance(Duration.ofSeconds(14));
    assertThat(rejected.readRecordsToList()).hasSize(1);
    assertThat(messages.isEmpty()).isTrue();
  }

  private void start(TopicLookup lookup) {
    driver = new TopologyTestDriver(DelayTopology.build(topics, DelayConfig.defaults(), lookup,
        new DelayMetrics(new SimpleMeterRegistry())),
        StreamsTestConfig.forDriver("delay-listing-test", topics.names(),
            stateDir),
        T0);
  }

  /** Moves the wall clock in 10 ms steps, so the drain ticks run as they would. */
  private void advance(Duration d) {
    for (long t = 0; t < d.toMillis(); t += 10) {
      now.addAndGet(10);
      driver.advanceWallClockTime(Duration.ofMillis(10));
    }
  }

  private static ScheduleCommand schedule(String id, Instant at, String topic) {
    return ScheduleCommand.newBuilder().setId(id).setOp(ScheduleOp.SCHEDULE).setDeliverAt(at).setTargetTopic(topic)
        .setKey(ByteBuffer.wrap(("k-" + id).getBytes(StandardCharsets.UTF_8)))
        .setValue(ByteBuffer.wrap(("v-" + id).getBytes(StandardCharsets.UTF_8))).setHeaders(Map.of()).build();
  }
}
