package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.InputLag;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.avro.Ack;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.Delivery;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wheel does not time out a seq whose ACK was produced before the deadline but is still in the input backlog
 * (a false timeout would make the device be pushed the same entries again),
 * and a lagging input holds timeouts back at most the grace. Tick 1 s, timeout 10 s; time is the driver's wall clock.
 */
class AckInputLagTest {

  private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

  @TempDir
  Path stateDir;

  private final String registry = "mock://ack-lag-" + UUID.randomUUID();
  private final ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registry));
  private TopologyTestDriver driver;
  private TestInputTopic<String, Delivery> deliveries;
  private TestInputTopic<String, Ack> acks;
  private TestOutputTopic<String, AckTimeout> timeouts;
  private Instant clock = T0;
  /** What the consumer tells of each input's unprocessed records (unknown unless a test says: time rules alone). */
  private OptionalLong lagOfAcks = OptionalLong.empty();
  private long acksPiped;
  private long deliveriesPiped;
  private OptionalLong lagOfDeliveries = OptionalLong.empty();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

  @AfterEach
  void close() {
    driver.close();
    InMemorySchemaRegistry.drop(registry);
  }

  @Test
  void anAckProducedBeforeTheDeadlineButStillInTheBacklogPreventsTheTimeout() {
    start(Duration.ofSeconds(60));
    // Given alice's phone got seq 1 at 0 s (deadline 10 s)
    push("alice", 1, 0);
    // and from now = 9 s the ACK input lags 7 s: the backlog being read holds ACKs produced at 2 s, 2.5 s, ...
    // When the wall clock passes the deadline (now = 12 s) while alice's ACK, produced at 5 s, is still unread
    readLaggingAcks(9_000, 12_000, 7_000);
    // Then nothing times out: the input has not been read up to the deadline yet
    assertThat(timeouts.isEmpty()).isTrue();

    // When the backlog reaches alice's ACK (produced at 5 s, read at 12.5 s)
    advanceTo(12_500);
    ack("alice", 1, 5_000);
    advanceTo(30_000);

    // Then there is never a timeout for seq 1
    assertThat(timeouts.isEmpty()).isTrue();
  }

  @Test
  void aLaggingInputHoldsTimeoutsBackAtMostTheGrace() {
    start(Duration.ofSeconds(5));
    // Given seq 1 pushed at 0 s (deadline 10 s), never ACKed
    push("alice", 1, 0);
    // When ACKs keep being read that were produced at 1 s (the input is stuck 1 s into the past)
    for (long now = 1_000; now <= 20_000; now += 500) {
      advanceTo(now);
      ack("bob", now, 1_000);
      if (now < 15_000) {
        // Then before deadline + grace (15 s) no timeout
        assertThat(timeouts.isEmpty()).as("at %d ms", now).isTrue();
      }
    }
    // And by deadline + grace + a tick it has fired, once
    assertThat(timeouts.readValuesToList()).extracting(AckTimeout::getSeqs).containsExactly(java.util.List.of(1L));
  }

  @Test
  void anIdleInputDoesNotDelayTimeouts() {
    start(Duration.ofSeconds(60));
    // Given seq 1 at 0 s and an old ACK read late at 2 s (lagging), then no more ACKs at all
    push("alice", 1, 0);
    advanceTo(2_000);
    ack("bob", 5, 0);
    // When the deadline slot comes round (now = 10 s), the input has been idle for 8 s
    advanceTo(10_000);
    // Then the timeout fires on time
    assertThat(timeouts.readValuesToList()).hasSize(1);
  }

  @Test
  void aPauseInALaggingInputIsNotTakenForSilence() {
    start(Duration.ofSeconds(60));
    // Given alice's phone got seq 1 at 0 s (deadline 10 s), and from 9 s the input lags 7 s
    push("alice", 1, 0);
    readLaggingAcks(9_000, 11_000, 7_000);
    // When the stream thread reads nothing for 3.5 s (a long commit, its other tasks) while the deadline is past
    advanceTo(13_000);
    advanceTo(14_500);
    // Then nothing fires: a pause in a backlog is not an idle input
    assertThat(timeouts.isEmpty()).isTrue();

    // And when the backlog goes on with alice's ACK (produced at 5 s), there is never a timeout for seq 1
    ack("alice", 1, 5_000);
    advanceTo(30_000);
    assertThat(timeouts.isEmpty()).isTrue();
  }

  @Test
  void freshDeliveriesReadAheadOfLaggingAcksDoNotExpireSlots() {
    start(Duration.ofSeconds(60));
    // Given alice's phone got seq 1 at 0 s (deadline 10 s)
    push("alice", 1, 0);
    // When from 9 s the ACKs read lag 7 s while fresh deliveries to bob are read after them (the last record read
    // is always a fresh one)
    long seq = 1;
    for (long now = 9_000; now <= 12_000; now += 500) {
      advanceTo(now);
      ack("bob", now, now - 7_000);
      push("bob", seq++, now);
    }
    // Then nothing fires: the ACK input has only been read up to 5 s
    assertThat(timeouts.isEmpty()).isTrue();

    // And when the ACKs reach alice's (produced at 5 s), there is never a timeout for seq 1
    ack("alice", 1, 5_000);
    advanceTo(30_000);
    assertThat(timeouts.readValuesToList()).extracting(AckTimeout::getUserId).doesNotContain("alice");
  }

  @Test
  void deliveriesToOthersKeepATimeoutOnTimeWhenItsAckNeverComes() {
    start(Duration.ofSeconds(60));
    // Given seq 1 to alice at 0 s (deadline 10 s) and no ACK from anyone, while bob gets a push every 500 ms
    push("alice", 1, 0);
    long seq = 1;
    for (long now = 500; now < 11_000; now += 500) {
      advanceTo(now);
      push("bob", seq++, now);
      if (now < 10_000) {
        assertThat(timeouts.isEmpty()).as("at %d ms", now).isTrue();
      }
    }
    // Then alice's timeout fired within a tick of the deadline: the input was caught up all along
    assertThat(timeouts.readValuesToList()).extracting(AckTimeout::getUserId).contains("alice");
  }

  @Test
  void anInputReadToItsEndIsQuietAtOnceSoADeadlineAfterTheLastRecordFiresWithinATick() {
    // Given every record of both inputs is processed (the consumer is at the end, right after the last one)
    lagOfAcks = OptionalLong.of(0);
    lagOfDeliveries = OptionalLong.of(0);
    start(Duration.ofSeconds(60));
    // and seq 1 to alice at 0 s (deadline 10 s, never ACKed), and bob's traffic until 8.5 s, then nothing (the
    // load stopped)
    push("alice", 1, 0);
    for (long now = 500; now <= 8_500; now += 500) {
      advanceTo(now);
      push("bob", now, now);
      ack("bob", now, now);
    }
    // When the deadline's slot comes round (10 s), 1.5 s after the last record
    advanceTo(10_000);
    // Then it fires then: the inputs are quiet, not lagging (by record times alone the wheel waited for 5 s of
    // silence, until 13.5 s: the last record's time is all it knows the inputs were read up to)
    assertThat(timeouts.readValuesToList()).extracting(AckTimeout::getUserId).contains("alice");
  }

  @Test
  void anAckInputWithRecordsWaitingAtTheBrokerHoldsTimeoutsBackHoweverLongItIsNotRead() {
    // Given the consumer knows of ACKs at the broker it has not fetched (the thread is busy with other tasks)
    lagOfAcks = OptionalLong.of(500);
    lagOfDeliveries = OptionalLong.of(0);
    start(Duration.ofSeconds(60));
    // and seq 1 to alice at 0 s (deadline 10 s); the ACK input was last read at 3 s (an ACK produced at 3 s)
    push("alice", 1, 0);
    advanceTo(3_000);
    ack("bob", 1, 3_000);
    // When fresh deliveries to bob keep being read until 12 s, but no ACK for 9 s (longer than the idle time)
    for (long now = 3_500; now <= 12_000; now += 500) {
      advanceTo(now);
      push("bob", now, now);
    }
    // Then nothing fires: unread ACKs are not silence
    assertThat(timeouts.isEmpty()).isTrue();

    // And when the ACKs are read again, alice's (produced at 5 s) among them, there is never a timeout for seq 1
    lagOfAcks = OptionalLong.of(0);
    ack("alice", 1, 5_000);
    advanceTo(30_000);
    assertThat(timeouts.readValuesToList()).extracting(AckTimeout::getUserId).doesNotContain("alice");
  }

  @Test
  void unprocessedAcksBoundTheHorizonByWhatWasReadHoweverFreshTheLastOneWas() {
    // Given the consumer tells that a few ACKs always wait unprocessed (the wheel is just behind a steady load)
    lagOfAcks = OptionalLong.of(3);
    lagOfDeliveries = OptionalLong.of(0);
    start(Duration.ofSeconds(60));
    // and seq 1 to alice at 0 s (deadline 10 s); ACKs of bob are read 200 ms after they were produced (fresh)
    push("alice", 1, 0);
    readLaggingAcks(500, 10_000, 200);
    // When the deadline's slot comes round (10 s), the newest ACK read was produced at 9.8 s
    // Then nothing fires: ACKs produced between 9.8 s and 10 s may still be unread (by the time rules alone a
    // fresh input counted as caught up and the slot fired)
    assertThat(timeouts.isEmpty()).isTrue();

    // And when alice's ACK, produced at 9.9 s, is read next, there is never a timeout for seq 1
    advanceTo(10_200);
    ack("alice", 1, 9_900);
    lagOfAcks = OptionalLong.of(0);
    advanceTo(30_000);
    assertThat(timeouts.readValuesToList()).extracting(AckTimeout::getUserId).doesNotContain("alice");
  }

  @Test
  void howLongAnInputsWrittenRecordsWaitedForTheThreadIsMeasured() {
    start(Duration.ofSeconds(60));
    // Given an ACK read at 1 s, and one produced at 0.6 s that the stream thread reads only at 4 s (busy elsewhere)
    advanceTo(1_000);
    ack("bob", 1, 500);
    advanceTo(4_000);
    ack("bob", 2, 600);

    // Then the ACK input waited 3 s: the figure that must stay well under the grace
    Timer waits = meters.get(AckWheelMetrics.INPUT_WAIT).timer();
    assertThat(waits.count()).isEqualTo(1);
    assertThat(waits.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(3_000);
  }

  private void start(Duration grace) {
    AckTimeoutConfig config = AckTimeoutConfig.defaults().withTiming(Duration.ofSeconds(1), Duration.ofSeconds(10))
        .withInputGrace(grace);
    // The driver gives each topic offsets 0, 1, ...: what was piped in is processed, "lag" more wait at the broker.
    InputLag lag = (topic, partition, asOf) -> {
      boolean isAcks = topic.equals(topics.acks().name());
      OptionalLong waiting = isAcks ? lagOfAcks : lagOfDeliveries;
      long piped = isAcks ? acksPiped : deliveriesPiped;
      return waiting.isEmpty() ? Optional.empty()
          : Optional.of(new InputLag.Ends(piped + waiting.getAsLong(), piped));
    };
    driver = new TopologyTestDriver(AckWheelTopology.build(topics, config,
        new AckWheelMetrics(meters), new PunctuationBudget(config.maxEntriesPerPunctuation(),
            AckWheelProcessor.MAX_MS_PER_WINDOW, PunctuationBudget.DEFAULT_WINDOW_MS),
        lag),
        StreamsTestConfig.forDriver("ack-lag-test", topics.names(), stateDir), T0);
    deliveries = driver.createInputTopic(topics.deliveries().name(), topics.deliveries().keySerde().serializer(),
        topics.deliveries().valueSerde().serializer());
    acks = driver.createInputTopic(topics.acks().name(), topics.acks().keySerde().serializer(),
        topics.acks().valueSerde().serializer());
    timeouts = driver.createOutputTopic(topics.ackTimeouts().name(), topics.ackTimeouts().keySerde().deserializer(),
        topics.ackTimeouts().valueSerde().deserializer());
  }

  /** From {@code from} to {@code to}, every 500 ms, reads an ACK of bob's produced {@code lag} ms earlier. */
  private void readLaggingAcks(long from, long to, long lag) {
    for (long now = from; now <= to; now += 500) {
      advanceTo(now);
      ack("bob", now, now - lag);
    }
  }

  private void advanceTo(long millisAfterT0) {
    Instant to = T0.plusMillis(millisAfterT0);
    driver.advanceWallClockTime(Duration.between(clock, to));
    clock = to;
  }

  private void push(String user, long seq, long pushedAt) {
    Instant at = T0.plusMillis(pushedAt);
    deliveriesPiped++;
    deliveries.pipeInput(user, Delivery.newBuilder().setUserId(user).setDeviceId("phone").setSeq(seq)
        .setPushedAt(at).setAttempt(1).build(), at);
  }

  private void ack(String user, long seq, long producedAt) {
    Instant at = T0.plusMillis(producedAt);
    acksPiped++;
    acks.pipeInput(user, Ack.newBuilder().setUserId(user).setDeviceId("phone").setSeq(seq).setAckedAt(at).build(), at);
  }
}
