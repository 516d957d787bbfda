package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.avro.Ack;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.Delivery;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wheel driven by explicit wall-clock time; {@code T0} is a whole second, slot boundaries are quarter ticks (a
 * whole-tick step fires the punctuator once, so it covers four slots).
 */
class AckWheelTopologyTest {

  private static final String REGISTRY = "mock://ack-wheel-test";
  private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

  @TempDir
  Path stateDir;

  private final ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(REGISTRY));
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private TopologyTestDriver driver;
  private TestInputTopic<String, Delivery> deliveries;
  private TestInputTopic<String, Ack> acks;
  private TestOutputTopic<String, AckTimeout> timeouts;
  private Instant clock = T0;

  @AfterEach
  void close() {
    if (driver != null) {
      driver.close();
    }
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  private void start(AckTimeoutConfig config) {
    driver = new TopologyTestDriver(AckWheelTopology.build(topics, config, new AckWheelMetrics(meters)),
        StreamsTestConfig.forDriver("ack-wheel-test", topics.names(), stateDir), T0);
    deliveries = driver.createInputTopic(topics.deliveries().name(), topics.deliveries().keySerde().serializer(),
        topics.deliveries().valueSerde().serializer());
    acks = driver.createInputTopic(topics.acks().name(), topics.acks().keySerde().serializer(),
        topics.acks().valueSerde().serializer());
    timeouts = driver.createOutputTopic(topics.ackTimeouts().name(), topics.ackTimeouts().keySerde().deserializer(),
        topics.ackTimeouts().valueSerde().deserializer());
  }

  @Test
  void workedExampleTimesOutTheUnackedPushesOfASlotTogetherOnce() {
    // Given the default wheel (1 s slots, 15 s timeout) and three independent waits: each is a push to another
    // recipient's phone, because an ACK in this pipeline is cumulative per device.
    start(AckTimeoutConfig.defaults());

    // When 101, 102 and 103 are pushed during second 2 (deadlines 17.1 s .. 17.7 s, all in the slot ending at 18 s)
    push("bob", "phone", 101, at(2_100));
    push("carol", "phone", 102, at(2_400));
    push("dave", "phone", 103, at(2_700));
    assertThat(pending()).isEqualTo(3);
    // now = 5 s: the client of 102 ACKs it, so the slot holds 101 and 103 only
    advanceTo(5_000);
    ack("carol", "phone", 102, at(5_000));
    assertThat(pending()).isEqualTo(2);

    // Then nothing fires before the slot comes round: now = 17 s
    advanceTo(17_000);
    assertThat(timeouts.isEmpty()).isTrue();
    // now = 18 s: 101 and 103 time out in the same punctuation, 102 does not
    advanceTo(18_000);
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("bob", timeout("bob", "phone", List.of(101L), 2_100, 17_100, 1), 18_000),
        record("dave", timeout("dave", "phone", List.of(103L), 2_700, 17_700, 1), 18_000));
    // now = 60 s: the wheel has gone round several times; nothing fires twice
    advanceTo(19_000);
    advanceTo(60_000);
    assertThat(timeouts.isEmpty()).isTrue();
    assertThat(pending()).isZero();
    assertThat(storeSize(AckWheelTopology.SLOT_STORE)).isZero();
    assertThat(meters.get(AckWheelMetrics.TIMEOUTS).tag("kind", "final").counter().count()).isEqualTo(2);
    assertThat(meters.get(AckWheelMetrics.TIMED_OUT_SEQS).counter().count()).isEqualTo(2);
    // lateness = emit time - deadline: 18.0 - 17.1 and 18.0 - 17.7
    assertThat(meters.get(AckWheelMetrics.LATENESS).timer().count()).isEqualTo(2);
    assertThat(meters.get(AckWheelMetrics.LATENESS).timer().totalTime(java.util.concurrent.TimeUnit.MILLISECONDS))
        .isEqualTo(1_200);
  }

  @Test
  void aDeadlineFiresAtTheEndOfItsQuarterTickNotOfItsTick() {
    // Given the default wheel (1 s tick: four 250 ms slots) and 101 pushed at 2.1 s, 103 at 2.7 s (deadlines 17.1 s
    // and 17.7 s: the slots ending at 17.25 s and 17.75 s)
    start(AckTimeoutConfig.defaults());
    push("bob", "phone", 101, at(2_100));
    push("dave", "phone", 103, at(2_700));

    // When the wheel turns a slot at a time
    advanceTo(17_000);
    assertThat(timeouts.isEmpty()).isTrue();
    // Then each fires at the end of its own slot, within a quarter tick of its deadline, never before it
    advanceTo(17_250);
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("bob", timeout("bob", "phone", List.of(101L), 2_100, 17_100, 1), 17_250));
    advanceTo(17_500);
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(17_750);
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("dave", timeout("dave", "phone", List.of(103L), 2_700, 17_700, 1), 17_750));
    assertThat(meters.get(AckWheelMetrics.LATENESS).timer().totalTime(java.util.concurrent.TimeUnit.MILLISECONDS))
        .isEqualTo(150 + 50);
  }

  @Test
  void aTimerArmedWithWiderSlotsNeverFiresBeforeItsDeadline() {
    // Given a timer stored by a wheel with 1 s slots (an earlier build, or IM_ACK_TICK=4s now 1s): deadline 17.1 s
    // in slot 18, which this wheel (250 ms slots) reads as the slot ending at 4.5 s
    start(AckTimeoutConfig.defaults());
    KeyValueStore<Bytes, byte[]> deviceStore = driver.getKeyValueStore(AckWheelTopology.DEVICE_STORE);
    KeyValueStore<Bytes, byte[]> slotStore = driver.getKeyValueStore(AckWheelTopology.SLOT_STORE);
    long t0 = T0.toEpochMilli();
    long wideSlot = (t0 + 17_100 + 999) / 1_000;
    deviceStore.put(Bytes.wrap(WheelCodec.device("bob", "phone")), WheelCodec.deviceValue(new DeviceTimers(
        DeviceTimers.NO_ACK, 0, List.of(new DeviceTimers.Run(101, 101, wideSlot, t0 + 2_100, t0 + 17_100,
            t0 + 17_100, 1)))));
    slotStore.put(Bytes.wrap(WheelCodec.slot(wideSlot, "bob", "phone")), WheelCodec.EMPTY);

    // When the wheel passes that slot number, and later the deadline
    advanceTo(5_000);
    // Then nothing fires early: the timer went back in at the slot of its deadline
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(17_000);
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(17_250);
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("bob", timeout("bob", "phone", List.of(101L), 2_100, 17_100, 1), 17_250));
    assertThat(storeSize(AckWheelTopology.SLOT_STORE)).isZero();
  }

  @Test
  void cumulativeAckRemovesEveryPendingSeqUpToItOnThatDeviceOnly() {
    // Given alice's phone got 201..205 and her tablet 201..202, all in second 1 (deadline slot 17 s)
    start(AckTimeoutConfig.defaults());
    for (long seq = 201; seq <= 205; seq++) {
      push("alice", "phone", seq, at(1_000 + seq));
    }
    push("alice", "tablet", 201, at(1_500));
    push("alice", "tablet", 202, at(1_600));

    // When the phone ACKs 203 at now = 3 s (covering 201..203 on the phone, not on the tablet)
    advanceTo(3_000);
    ack("alice", "phone", 203, at(3_000));
    // and, at now = 4 s, an older cumulative ACK arrives late; it changes nothing
    advanceTo(4_000);
    ack("alice", "phone", 202, at(4_000));

    // Then at now = 17 s one AckTimeout per device carries all of its unACKed seqs
    advanceTo(16_000);
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(17_000);
    // (201..205 share a slot: one run, whose earliest push and deadline are 201's, kept when the ACK trims it)
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("alice", timeout("alice", "phone", List.of(204L, 205L), 1_201, 16_201, 1), 17_000),
        record("alice", timeout("alice", "tablet", List.of(201L, 202L), 1_500, 16_500, 1), 17_000));
    advanceTo(40_000);
    assertThat(timeouts.isEmpty()).isTrue();
  }

  @Test
  void successiveAcksEachRemoveEverythingPendingUpToThemAboveThePreviousAck() {
    // Given alice's phone got 1..3, ACKed 2, then got 4..6 (pushed in second 1 and 2: deadline slots 16 s / 17 s)
    start(AckTimeoutConfig.defaults());
    for (long seq = 1; seq <= 3; seq++) {
      push("alice", "phone", seq, at(1_000 + seq));
    }
    advanceTo(1_500);
    ack("alice", "phone", 2, at(1_500));
    for (long seq = 4; seq <= 6; seq++) {
      push("alice", "phone", seq, at(2_000 + seq));
    }

    // When the phone ACKs 5 (covering 3, still pending from before the first ACK, and 4..5), then repeats it
    advanceTo(3_000);
    ack("alice", "phone", 5, at(3_000));
    ack("alice", "phone", 5, at(3_001));

    // Then only 6 times out, once (3 would have fired at 17 s, 6 fires at 18 s)
    advanceTo(17_000);
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(18_000);
    // (4..6 are one run: its earliest push and deadline are 4's)
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("alice", timeout("alice", "phone", List.of(6L), 2_004, 17_004, 1), 18_000));
    advanceTo(40_000);
    assertThat(timeouts.isEmpty()).isTrue();
  }

  @Test
  void noTimeoutAfterAnAck() {
    // Given a push of 7 to alice's phone at now = 0.5 s (deadline 15.5 s)
    start(AckTimeoutConfig.defaults());
    push("alice", "phone", 7, at(500));

    // When the phone ACKs it at now = 15 s, half a second before the deadline
    advanceTo(15_000);
    ack("alice", "phone", 7, at(15_000));

    // Then nothing ever fires: now = 16 s (the slot of 15.5 s), then long after
    advanceTo(16_000);
    advanceTo(120_000);
    assertThat(timeouts.isEmpty()).isTrue();
    assertThat(pending()).isZero();
    assertThat(storeSize(AckWheelTopology.SLOT_STORE)).isZero();
  }

  @Test
  void ackThatOvertakesItsDeliveryWins() {
    // Given the phone's ACK for 9 lands before the push worker's Delivery records of 8 and 9 (now = 0 s)
    start(AckTimeoutConfig.defaults());
    ack("alice", "phone", 9, at(300));

    // When the deliveries of 8, 9 and 10 arrive afterwards, all pushed at 0.2 s
    push("alice", "phone", 8, at(200));
    push("alice", "phone", 9, at(200));
    push("alice", "phone", 10, at(200));

    // Then only 10, which the ACK does not cover, is waited for and times out at now = 16 s
    assertThat(pending()).isEqualTo(1);
    advanceTo(16_000);
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("alice", timeout("alice", "phone", List.of(10L), 200, 15_200, 1), 16_000));
    assertThat(meters.get(AckWheelMetrics.IGNORED_DELIVERIES).counter().count()).isEqualTo(2);
    advanceTo(60_000);
    assertThat(timeouts.isEmpty()).isTrue();
  }

  @Test
  void afterDowntimeEveryOverdueSlotFiresOnceInBoundedRounds() {
    // Given at most 4 entries per commit window (100 ms) of the thread, a catch-up round every 10 ms, and 12 pushes: users u1..u4 get
    // seqs 1..3 each during second 1..4 (deadline slots 16 s .. 19 s)
    start(AckTimeoutConfig.defaults().withMaxEntriesPerPunctuation(4));
    for (int user = 1; user <= 4; user++) {
      for (long seq = 1; seq <= 3; seq++) {
        push("u" + user, "phone", seq, at(user * 1_000L + seq));
      }
    }

    // When the app was down (no punctuation ran) until now = 60 s: Kafka fires one punctuation, not 60
    advanceTo(60_000);

    // Then the first round expires the 4 oldest entries (slot 16 and the first entry of slot 17)
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("u1", timeout("u1", "phone", List.of(1L, 2L, 3L), 1_001, 16_001, 1), 60_000),
        record("u2", timeout("u2", "phone", List.of(1L), 2_001, 17_001, 1), 60_000));
    // now = 60.05 s: catch-up rounds inside the same window (one transaction) expire nothing more
    advanceTo(60_050);
    assertThat(timeouts.isEmpty()).isTrue();
    // now = 60.1 s: the next window's round continues where the last one stopped, inside u2's run (whose earliest
    // push and deadline are those of its first seq)
    advanceTo(60_100);
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("u2", timeout("u2", "phone", List.of(2L, 3L), 2_001, 17_001, 1), 60_100),
        record("u3", timeout("u3", "phone", List.of(1L, 2L), 3_001, 18_001, 1), 60_100));
    // now = 60.2 s: the last round
    advanceTo(60_200);
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("u3", timeout("u3", "phone", List.of(3L), 3_001, 18_001, 1), 60_200),
        record("u4", timeout("u4", "phone", List.of(1L, 2L, 3L), 4_001, 19_001, 1), 60_200));
    // now = 60.3 s .. 5 min: caught up, nothing fires twice
    advanceTo(60_300);
    advanceTo(61_000);
    advanceTo(300_000);
    assertThat(timeouts.isEmpty()).isTrue();
    assertThat(pending()).isZero();
  }

  @Test
  void deliveryThatArrivesAfterItsDeadlineFiresOnTheNextTick() {
    // Given the wheel has already turned past 30 s
    start(AckTimeoutConfig.defaults());
    advanceTo(30_000);

    // When a Delivery record pushed at 2 s (deadline 17 s) is written only now, e.g. after a push-worker outage
    // (the record's time is when it was written: the input is not lagging, the push worker was)
    deliveries.pipeInput("alice", Delivery.newBuilder().setUserId("alice").setDeviceId("phone").setSeq(3)
        .setPushedAt(at(2_000)).setAttempt(1).build(), at(30_000));

    // Then the next tick (now = 31 s) times it out
    advanceTo(31_000);
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("alice", timeout("alice", "phone", List.of(3L), 2_000, 17_000, 1), 31_000));
  }

  @Test
  void retriesRequestRedeliveryBeforeTheFinalTimeout() {
    // Given 3 attempts per seq: two redelivery requests, then the final timeout
    start(AckTimeoutConfig.defaults().withMaxAttempts(3));
    // and at now = 0 s seq 1 pushed to alice's phone (0.5 s) and to her tablet (0.6 s), deadline slot 16 s
    push("alice", "phone", 1, at(500));
    push("alice", "tablet", 1, at(600));

    // When the first deadline passes: now = 16 s, a retry request (attempts = 1) per device
    advanceTo(15_000);
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(16_000);
    List<TestRecord<String, AckTimeout>> first = timeouts.readRecordsToList();
    assertThat(first).containsExactly(
        retry("alice", timeout("alice", "phone", List.of(1L), 500, 15_500, 1), 16_000),
        retry("alice", timeout("alice", "tablet", List.of(1L), 600, 15_600, 1), 16_000));
    assertThat(first).allSatisfy(r -> assertThat(isFinal(r)).isFalse());

    // and the push worker redelivers to the tablet at 20 s (attempt 2, deadline 35 s), which ACKs it at 21 s
    advanceTo(20_000);
    push("alice", "tablet", 1, at(20_000), 2);
    advanceTo(21_000);
    ack("alice", "tablet", 1, at(21_000));

    // Then the phone, never redelivered, gets its second request a full timeout after the first: now = 31 s
    advanceTo(30_000);
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(31_000);
    TestRecord<String, AckTimeout> second = timeouts.readRecord();
    assertThat(second).isEqualTo(retry("alice", timeout("alice", "phone", List.of(1L), 500, 31_000, 2), 31_000));
    assertThat(isFinal(second)).isFalse();
    assertThat(timeouts.isEmpty()).isTrue();
    // now = 46 s: the third attempt timed out: final
    advanceTo(45_000);
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(46_000);
    TestRecord<String, AckTimeout> last = timeouts.readRecord();
    assertThat(last).isEqualTo(record("alice", timeout("alice", "phone", List.of(1L), 500, 46_000, 3), 46_000));
    assertThat(isFinal(last)).isTrue();
    // now = 2 min: nothing more, the tablet's ACK held
    advanceTo(120_000);
    assertThat(timeouts.isEmpty()).isTrue();
    assertThat(pending()).isZero();
  }

  @Test
  void withoutRetriesTheOnlyTimeoutIsFinal() {
    // Given the default policy (1 attempt), a push at 0.1 s
    start(AckTimeoutConfig.defaults());
    push("alice", "phone", 1, at(100));
    // When now = 16 s
    advanceTo(16_000);
    // Then the one timeout is marked final
    TestRecord<String, AckTimeout> only = timeouts.readRecord();
    assertThat(only.value().getAttempts()).isEqualTo(1);
    assertThat(isFinal(only)).isTrue();
    assertThat(timeouts.isEmpty()).isTrue();
  }

  @Test
  void aRecordInTheWrongPartitionGoesToTheRejectedTopicAndTheWheelGoesOn() {
    // Given the pipeline's error handling (log and continue, dead-letter queue to im.rejected)
    start(AckTimeoutConfig.defaults());
    TestOutputTopic<byte[], byte[]> rejected = driver.createOutputTopic(topics.rejected().name(),
        topics.rejected().keySerde().deserializer(), topics.rejected().valueSerde().deserializer());

    // When a Delivery for alice is keyed by another user (its ACKs would land in another partition)
    deliveries.pipeInput("mallory", Delivery.newBuilder().setUserId("alice").setDeviceId("phone").setSeq(1)
        .setPushedAt(at(100)).setAttempt(1).build(), at(100));
    // and a good one follows
    push("alice", "phone", 2, at(200));

    // Then the bad one is in im.rejected, never armed; the good one times out at now = 16 s
    assertThat(rejected.readRecordsToList()).singleElement()
        .satisfies(r -> {
          assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("mallory");
          assertThat(new String(r.headers().lastHeader(RejectedHeaders.MESSAGE).value(), StandardCharsets.UTF_8))
              .isEqualTo("record key 'mallory' is not its userId 'alice'");
          assertThat(new String(r.headers().lastHeader(RejectedHeaders.CODE).value(), StandardCharsets.UTF_8))
              .isEqualTo(RejectedRecord.INVALID);
        });
    advanceTo(16_000);
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("alice", timeout("alice", "phone", List.of(2L), 200, 15_200, 1), 16_000));
  }

  @Test
  void twoTasksOfOneThreadShareTheExpiryBudgetOfAWindow() {
    // Given two tasks of one stream thread (two drivers of one topology on this thread), 4 entries per window,
    // and 3 overdue pushes in each
    AckTimeoutConfig config = AckTimeoutConfig.defaults().withMaxEntriesPerPunctuation(4);
    dev.impipe.runtime.streams.PunctuationBudget budget = new dev.impipe.runtime.streams.PunctuationBudget(4,
        10_000, dev.impipe.runtime.streams.PunctuationBudget.DEFAULT_WINDOW_MS);
    driver = new TopologyTestDriver(AckWheelTopology.build(topics, config, new AckWheelMetrics(meters), budget),
        stateProps("first"), T0);
    try (TopologyTestDriver second = new TopologyTestDriver(AckWheelTopology.build(topics, config,
        AckWheelMetrics.discarding(), budget), stateProps("second"), T0)) {
      TestOutputTopic<String, AckTimeout> out1 = output(driver);
      TestOutputTopic<String, AckTimeout> out2 = output(second);
      for (long seq = 1; seq <= 3; seq++) {
        input(driver).pipeInput("a", delivery("a", seq), at(seq));
        input(second).pipeInput("b", delivery("b", seq), at(seq));
      }
      // When both punctuate in one window (now = 60 s), as one thread's tasks do before their commit
      driver.advanceWallClockTime(Duration.ofSeconds(60));
      second.advanceWallClockTime(Duration.ofSeconds(60));
      // Then together they expired 4 entries, not 4 each; the rest follows in the next window
      long first = out1.readRecordsToList().stream().mapToLong(r -> r.value().getSeqs().size()).sum();
      long other = out2.readRecordsToList().stream().mapToLong(r -> r.value().getSeqs().size()).sum();
      assertThat(first + other).isEqualTo(4);
      second.advanceWallClockTime(Duration.ofMillis(100));
      driver.advanceWallClockTime(Duration.ofMillis(100));
      first += out1.readRecordsToList().stream().mapToLong(r -> r.value().getSeqs().size()).sum();
      other += out2.readRecordsToList().stream().mapToLong(r -> r.value().getSeqs().size()).sum();
      assertThat(first).isEqualTo(3);
      assertThat(other).isEqualTo(3);
    }
  }

  @Test
  void theHighestAckOfADeviceIsForgottenAfterTheAckedRetention() {
    // Given a 1 min retention of ack-acked, and alice's phone ACKs seq 5 at 1 s
    start(AckTimeoutConfig.defaults().withAckedRetention(Duration.ofMinutes(1)));
    ack("alice", "phone", 5, at(1_000));
    assertThat(storeSize(AckWheelTopology.DEVICE_STORE)).isEqualTo(1);
    // When a delivery of seq 4 comes late (30 s): the ACK still wins, no timer
    advanceTo(30_000);
    push("alice", "phone", 4, at(500));
    assertThat(pending()).isZero();
    // Then once a minute has passed since the ACK (now = 61 s and the next scan), the entry is gone
    advanceTo(61_000);
    advanceTo(68_000);
    assertThat(storeSize(AckWheelTopology.DEVICE_STORE)).isZero();
    assertThat(timeouts.isEmpty()).isTrue();
  }

  @Test
  void aTimerThatDoesNotDecodeIsQuarantinedAndTheSlotGoesOn() {
    // Given two timers in slot 16 s, one of whose stored value is corrupt
    start(AckTimeoutConfig.defaults());
    TestOutputTopic<byte[], byte[]> rejected = driver.createOutputTopic(topics.rejected().name(),
        topics.rejected().keySerde().deserializer(), topics.rejected().valueSerde().deserializer());
    push("alice", "phone", 1, at(100));
    push("bob", "phone", 1, at(200));
    KeyValueStore<Bytes, byte[]> pendingStore = driver.getKeyValueStore(AckWheelTopology.DEVICE_STORE);
    Bytes bad = Bytes.wrap(WheelCodec.device("alice", "phone"));
    pendingStore.put(bad, new byte[] {9, 9, 9});

    // When the slot is due (now = 16 s)
    advanceTo(16_000);

    // Then bob's timeout fires, alice's timer went to im.rejected with its stored bytes and left the stores
    assertThat(timeouts.readRecordsToList()).containsExactly(
        record("bob", timeout("bob", "phone", List.of(1L), 200, 15_200, 1), 16_000));
    assertThat(rejected.readRecordsToList()).singleElement().satisfies(r -> {
      assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("alice");
      assertThat(r.value()).containsExactly(9, 9, 9);
      assertThat(r.headers().lastHeader(dev.impipe.runtime.streams.RejectedHeaders.STORE).value())
          .isEqualTo(AckWheelTopology.DEVICE_STORE.getBytes(StandardCharsets.UTF_8));
    });
    assertThat(pendingStore.get(bad)).isNull();
    assertThat(storeSize(AckWheelTopology.SLOT_STORE)).isZero();
  }

  private Properties stateProps(String dir) {
    return StreamsTestConfig.forDriver("ack-wheel-test", topics.names(), stateDir.resolve(dir));
  }

  private TestInputTopic<String, Delivery> input(TopologyTestDriver d) {
    return d.createInputTopic(topics.deliveries().name(), topics.deliveries().keySerde().serializer(),
        topics.deliveries().valueSerde().serializer());
  }

  private TestOutputTopic<String, AckTimeout> output(TopologyTestDriver d) {
    return d.createOutputTopic(topics.ackTimeouts().name(), topics.ackTimeouts().keySerde().deserializer(),
        topics.ackTimeouts().valueSerde().deserializer());
  }

  private static Delivery delivery(String user, long seq) {
    return Delivery.newBuilder().setUserId(user).setDeviceId("phone").setSeq(seq).setPushedAt(at(seq))
        .setAttempt(1).build();
  }

  // --- helpers ---

  private static Instant at(long millisAfterT0) {
    return T0.plusMillis(millisAfterT0);
  }

  /** Moves the driver's wall clock to {@code T0 + millisAfterT0}; due punctuators fire once each. */
  private void advanceTo(long millisAfterT0) {
    Duration step = Duration.between(clock, at(millisAfterT0));
    assertThat(step.isNegative()).as("time only moves forward").isFalse();
    driver.advanceWallClockTime(step);
    clock = at(millisAfterT0);
  }

  private void push(String user, String device, long seq, Instant pushedAt) {
    push(user, device, seq, pushedAt, 1);
  }

  private void push(String user, String device, long seq, Instant pushedAt, int attempt) {
    deliveries.pipeInput(user, Delivery.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq)
        .setPushedAt(pushedAt).setAttempt(attempt).build(), pushedAt);
  }

  private void ack(String user, String device, long seq, Instant ackedAt) {
    acks.pipeInput(user, Ack.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq).setAckedAt(ackedAt)
        .build(), ackedAt);
  }

  private static AckTimeout timeout(String user, String device, List<Long> seqs, long firstPushedAt, long deadline,
      int attempts) {
    return AckTimeout.newBuilder().setUserId(user).setDeviceId(device).setSeqs(seqs)
        .setFirstPushedAt(at(firstPushedAt)).setDeadline(at(deadline)).setAttempts(attempts).build();
  }

  /** A final timeout as emitted at {@code T0 + emittedAt}. */
  private static TestRecord<String, AckTimeout> record(String key, AckTimeout value, long emittedAt) {
    return emitted(key, value, emittedAt, true);
  }

  /** A redelivery request as emitted at {@code T0 + emittedAt}. */
  private static TestRecord<String, AckTimeout> retry(String key, AckTimeout value, long emittedAt) {
    return emitted(key, value, emittedAt, false);
  }

  private static TestRecord<String, AckTimeout> emitted(String key, AckTimeout value, long emittedAt,
      boolean isFinal) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(AckWheelTopology.FINAL_HEADER, Boolean.toString(isFinal).getBytes(StandardCharsets.UTF_8));
    return new TestRecord<>(key, value, headers, at(emittedAt));
  }

  private static boolean isFinal(TestRecord<String, AckTimeout> record) {
    Header header = record.headers().lastHeader(AckWheelTopology.FINAL_HEADER);
    return Boolean.parseBoolean(new String(header.value(), StandardCharsets.UTF_8));
  }

  /** Pending seqs in the device records; checks that the slot keys are exactly the slots of their runs. */
  private long pending() {
    long count = 0;
    java.util.Set<String> slotsOfRuns = new java.util.TreeSet<>();
    KeyValueStore<Bytes, byte[]> devices = driver.getKeyValueStore(AckWheelTopology.DEVICE_STORE);
    try (KeyValueIterator<Bytes, byte[]> it = devices.all()) {
      while (it.hasNext()) {
        var kv = it.next();
        DeviceTimers state = WheelCodec.decodeDevice(kv.value, Long.MAX_VALUE);
        dev.impipe.runtime.streams.OrderedKey.Reader key = dev.impipe.runtime.streams.OrderedKey.read(kv.key.get());
        String device = key.string() + "|" + key.string();
        state.slots().forEach(slot -> slotsOfRuns.add(slot + "|" + device));
        count += state.pendingSeqs();
      }
    }
    java.util.Set<String> slotKeys = new java.util.TreeSet<>();
    KeyValueStore<Bytes, byte[]> slots = driver.getKeyValueStore(AckWheelTopology.SLOT_STORE);
    try (KeyValueIterator<Bytes, byte[]> it = slots.all()) {
      while (it.hasNext()) {
        WheelCodec.SlotKey k = WheelCodec.decodeSlot(it.next().key.get());
        slotKeys.add(k.slot() + "|" + k.userId() + "|" + k.deviceId());
      }
    }
    assertThat(slotKeys).as("slot keys are the slots of the devices' runs").isEqualTo(slotsOfRuns);
    assertThat((long) meters.get(AckWheelMetrics.PENDING).gauge().value()).as("pending gauge").isEqualTo(count);
    return count;
  }

  private long storeSize(String name) {
    KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(name);
    long n = 0;
    try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
      while (it.hasNext()) {
        it.next();
        n++;
      }
    }
    return n;
  }
}
