package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.InputLag;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.avro.Ack;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.Delivery;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.testkit.CountingStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * The wheel's shell over a {@link MockProcessorContext} with in-memory stores: 400 ms ticks (100 ms slots), a 2 s
 * timeout; unless a test says otherwise the broker reports both inputs processed to their ends, so a slot-boundary
 * round expires up to its own time. Wall-clock time is set explicitly before each step.
 */
class AckWheelProcessorTest {

  /** Wall time at the start: 50 ms into a slot. */
  private static final long T0 = 1_000_050;
  private static final AckWheelProcessor.StoreNames NAMES =
      new AckWheelProcessor.StoreNames("ack-devices", "ack-slots", "timeouts", "rejected", "final");
  private static final AckTimeoutConfig CONFIG = AckTimeoutConfig.defaults()
      .withTiming(Duration.ofMillis(400), Duration.ofSeconds(2)).withMaxPendingPerDevice(10);

  private final MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final AckWheelMetrics metrics = new AckWheelMetrics(meters);
  private final KeyValueStore<Bytes, byte[]> devices = store(NAMES.devices());
  /** Calls to the slot store and the device store, by method name. */
  private final List<String> slotCalls = new ArrayList<>();
  private final List<String> deviceCalls = new ArrayList<>();
  /** What the broker reports for both inputs (end, position); processed to the end unless a test changes it. */
  private Optional<InputLag.Ends> ends = Optional.of(new InputLag.Ends(0, 0));
  private AckWheelProcessor processor;
  private long offset;

  private KeyValueStore<Bytes, byte[]> store(String name) {
    KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.Bytes(),
        Serdes.ByteArray()).withLoggingDisabled().build();
    s.init(context.getStateStoreContext(), s);
    return s;
  }

  private void start(long records, InputLag inputLag) {
    context.addStateStore(CountingStore.of(devices, deviceCalls));
    context.addStateStore(CountingStore.of(store(NAMES.slots()), slotCalls));
    context.setCurrentSystemTimeMs(T0);
    processor = new AckWheelProcessor(CONFIG, metrics, new PunctuationBudget(records, 60_000, 100), "deliveries",
        "acks", inputLag, NAMES);
    processor.init(context);
  }

  private void start() {
    start(1_000, (topic, partition, asOf) -> ends);
  }

  @Test
  void roundsAreAnchoredOnSlotBoundaries() {
    start();

    assertThat(context.scheduledPunctuators()).singleElement().satisfies(p -> {
      assertThat(p.getStartTime()).isEqualTo(Instant.ofEpochMilli(1_000_100));
      assertThat(p.getInterval()).isEqualTo(Duration.ofMillis(100));
      assertThat(p.getType()).isEqualTo(PunctuationType.WALL_CLOCK_TIME);
    });
  }

  @Test
  void aSeqTimesOutInTheRoundOfItsDeadlineAndNotBefore() {
    start();
    deliver("bob", "phone", 1, 1, T0);
    assertThat(metrics.pending()).isEqualTo(1);

    // The deadline is T0 + 2 s: in slot 10,021, whose round runs at 1,002,100
    round(T0 + 1_950);
    assertThat(timeouts()).isEmpty();
    round(T0 + 2_050);

    assertThat(timeouts()).singleElement().satisfies(t -> {
      assertThat(t.getUserId()).isEqualTo("bob");
      assertThat(t.getSeqs()).containsExactly(1L);
      assertThat(t.getDeadline()).isEqualTo(Instant.ofEpochMilli(T0 + 2_000));
    });
    assertThat(metrics.pending()).isZero();
    // No backlog: no catch-up round
    assertThat(context.scheduledPunctuators()).hasSize(1);
  }

  @Test
  void aRoundReadsOnlyTheSlotsAfterTheLastRoundAndNoneWhenNothingCanBeDue() {
    start();
    deliver("bob", "phone", 1, 1, T0);
    round(T0 + 2_050);
    int reads = ranges();

    // The same slot again: nothing can be due, no read
    round(T0 + 2_050);
    assertThat(ranges()).isEqualTo(reads);
    // The next slot: one read, from the slot after the last round's
    round(T0 + 2_150);
    assertThat(ranges()).isEqualTo(reads + 1);
    round(T0 + 2_150);
    assertThat(ranges()).isEqualTo(reads + 1);
    // None of these rounds left a backlog
    assertThat(context.scheduledPunctuators()).hasSize(1);
  }

  @Test
  void aRoundCutByTheBudgetGoesOnInACatchUpRoundUntilDone() {
    // One seq per 100 ms window of the budget
    start(1, (topic, partition, asOf) -> ends);
    deliver("bob", "phone", 1, 1, T0);
    deliver("carol", "phone", 1, 1, T0);

    round(T0 + 2_050);
    assertThat(timeouts()).hasSize(1);
    assertThat(context.scheduledPunctuators()).hasSize(2);
    var catchUp = context.scheduledPunctuators().get(1);
    assertThat(catchUp.getInterval()).isEqualTo(CONFIG.catchUpInterval());

    // The catch-up round in the budget's next window finishes the backlog, and stops
    context.setCurrentSystemTimeMs(T0 + 2_150);
    catchUp.getPunctuator().punctuate(T0 + 2_150);
    assertThat(timeouts()).extracting(AckTimeout::getUserId).containsExactly("bob", "carol");
    assertThat(catchUp.cancelled()).isTrue();
    assertThat(context.scheduledPunctuators().get(0).cancelled()).isFalse();
    // And the wheel is caught up: after the next slot's round, another in the same slot reads nothing
    round(T0 + 2_160);
    int reads = ranges();
    round(T0 + 2_170);
    assertThat(ranges()).isEqualTo(reads);
  }

  @Test
  void whileAMarkIsNotReachedARecheckRunsAndStopsOnceItIs() {
    start();
    // Both inputs end at offset 5, of which the consumer has handed over up to 2
    ends = Optional.of(new InputLag.Ends(5, 2));
    deliver("bob", "phone", 1, 1, T0);

    round(T0 + 50);
    assertThat(context.scheduledPunctuators()).hasSize(2);
    var recheck = context.scheduledPunctuators().get(1);
    assertThat(recheck.getInterval()).isEqualTo(Duration.ofMillis(100));

    // Both inputs processed to offset 4: the mark is reached at the next round
    offset = 4;
    deliver("bob", "phone", 2, 2, T0 + 60);
    ack("bob", "bob", "phone", 0, T0 + 60);
    round(T0 + 150);
    assertThat(recheck.cancelled()).isTrue();
  }

  @Test
  void roundsThatLearnNoEndOffsetAreCountedPerInput() {
    // The broker answers for the deliveries, not for the ACKs (its 2 s timeout passed)
    start(1_000, (topic, partition, asOf) -> topic.equals("acks") ? Optional.empty() : ends);

    round(T0 + 100);
    round(T0 + 200);
    processor.inputHorizon(T0 + 250, false); // a re-check between rounds asks nothing

    assertThat(meters.get(AckWheelMetrics.ENDS_UNKNOWN).tag("input", "acks").counter().count()).isEqualTo(2);
    assertThat(meters.get(AckWheelMetrics.ENDS_UNKNOWN).tag("input", "deliveries").counter().count()).isZero();
  }

  @Test
  void aTaskThatJustStartedWaitsForItsAckInputBeforeFiring() {
    // The broker cannot tell: record times decide, and the ACK input has not been read since the start
    start(1_000, InputLag.UNKNOWN);
    context.setCurrentSystemTimeMs(T0);
    process("bob", Delivery.newBuilder().setUserId("bob").setDeviceId("phone").setSeq(1)
        .setPushedAt(Instant.ofEpochMilli(T0 - 3_000)).setAttempt(1).build(), T0);

    // Overdue already, but an ACK for it may be unread
    round(T0 + 100);

    assertThat(timeouts()).isEmpty();
  }

  @Test
  void anOlderAckChangesNothingAndTheSameAckAgainKeepsTheDeviceLonger() {
    start();
    deliver("bob", "phone", 1, 3, T0);
    ack("bob", "bob", "phone", 2, T0 + 10);
    assertThat(metrics.pending()).isEqualTo(1);

    int writes = puts(deviceCalls);
    ack("bob", "bob", "phone", 1, T0 + 20);
    assertThat(puts(deviceCalls)).isEqualTo(writes);
    assertThat(header().ackedSeq()).isEqualTo(2);
    assertThat(header().ackedAt()).isEqualTo(T0 + 10);

    ack("bob", "bob", "phone", 2, T0 + 30);
    assertThat(header().ackedAt()).isEqualTo(T0 + 30);
    assertThat(metrics.pending()).isEqualTo(1);
  }

  @Test
  void aRecordInTheWrongPartitionIsRejected() {
    start();

    assertThatThrownBy(() -> ack("mallory", "bob", "phone", 1, T0)).isInstanceOf(RejectedRecord.class)
        .hasMessageContaining("is not its userId");
    assertThatThrownBy(() -> deliver("mallory", "phone", 1, 1, T0, "bob")).isInstanceOf(RejectedRecord.class)
        .hasMessageContaining("is not its userId");
  }

  @Test
  void aDeliveryRangeOfMoreThanTheBoundIsRejectedOneOfTheBoundIsNot() {
    start();

    deliver("bob", "phone", 1, 10, T0);
    assertThat(metrics.pending()).isEqualTo(10);
    assertThatThrownBy(() -> deliver("bob", "laptop", 1, 11, T0)).isInstanceOf(RejectedRecord.class)
        .hasMessageContaining("is empty or longer than");
  }

  @Test
  void aDeliveryPartlyOvertakenByItsAckKeepsTheRest() {
    start();
    ack("bob", "bob", "phone", 5, T0);

    deliver("bob", "phone", 1, 6, T0);

    assertThat(metrics.pending()).isEqualTo(1);
    assertThat(meters.get(AckWheelMetrics.IGNORED_DELIVERIES).counter().count()).isEqualTo(5);
  }

  @Test
  void aDeliveryItsAckOvertookEntirelyWritesNothing() {
    start();
    ack("bob", "bob", "phone", 5, T0);
    int writes = puts(deviceCalls);

    deliver("bob", "phone", 1, 3, T0);

    assertThat(puts(deviceCalls)).isEqualTo(writes);
    assertThat(metrics.pending()).isZero();
    assertThat(meters.get(AckWheelMetrics.IGNORED_DELIVERIES).counter().count()).isEqualTo(3);
  }

  @Test
  void aRunSplitByTheBudgetKeepsItsRestInItsSlot() {
    // Two seqs per 100 ms window of the budget
    start(2, (topic, partition, asOf) -> ends);
    deliver("bob", "phone", 1, 3, T0);

    round(T0 + 2_050);
    assertThat(timeouts()).singleElement().satisfies(t -> assertThat(t.getSeqs()).containsExactly(1L, 2L));
    assertThat(context.scheduledPunctuators()).hasSize(2);

    context.setCurrentSystemTimeMs(T0 + 2_150);
    context.scheduledPunctuators().get(1).getPunctuator().punctuate(T0 + 2_150);
    assertThat(timeouts()).hasSize(2);
    assertThat(timeouts().get(1).getSeqs()).containsExactly(3L);
    assertThat(metrics.pending()).isZero();
  }

  @Test
  void aDeviceWithNothingPendingIsForgottenTheRetentionAfterItsLastAck() {
    start();
    ack("bob", "bob", "phone", 5, T0);
    assertThat(header().ackedSeq()).isEqualTo(5);

    // The first round after the retention (10 min) sweeps it
    round(T0 + CONFIG.ackedRetention().toMillis() + 1_000);

    assertThat(devices.get(Bytes.wrap(WheelCodec.device("bob", "phone")))).isNull();
  }

  @Test
  void closingTheTaskTakesItsPendingOutOfTheGauge() {
    start();
    deliver("bob", "phone", 1, 2, T0);
    assertThat(metrics.pending()).isEqualTo(2);

    processor.close();

    assertThat(metrics.pending()).isZero();
  }

  @Test
  void theSweepRemovesNoMoreDevicesThanTheRoundsBudgetAllows() {
    // One removal per 100 ms window of the budget
    start(1, (topic, partition, asOf) -> ends);
    ack("bob", "bob", "phone", 5, T0);
    ack("bob", "bob", "laptop", 5, T0);

    round(T0 + CONFIG.ackedRetention().toMillis() + 1_000);

    assertThat(devices.approximateNumEntries()).isEqualTo(1);
  }

  // ---- helpers

  private void deliver(String user, String device, long seq, long toSeq, long pushedAt) {
    deliver(user, device, seq, toSeq, pushedAt, user);
  }

  private void deliver(String key, String device, long seq, long toSeq, long pushedAt, String user) {
    context.setCurrentSystemTimeMs(pushedAt);
    process(key, Delivery.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq)
        .setToSeq(toSeq == seq ? null : toSeq).setPushedAt(Instant.ofEpochMilli(pushedAt)).setAttempt(1).build(),
        pushedAt);
  }

  private void ack(String key, String user, String device, long seq, long at) {
    context.setCurrentSystemTimeMs(at);
    process(key, Ack.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq)
        .setAckedAt(Instant.ofEpochMilli(at)).build(), at);
  }

  private void process(String key, SpecificRecord value, long at) {
    context.setRecordMetadata("input", 0, offset);
    processor.process(new Record<>(key, value, at));
  }

  private void round(long now) {
    context.setCurrentSystemTimeMs(now);
    processor.expire(now);
  }

  private static int puts(List<String> calls) {
    return (int) calls.stream().filter("put"::equals).count();
  }

  private int ranges() {
    return (int) slotCalls.stream().filter("range"::equals).count();
  }

  private WheelCodec.DeviceHeader header() {
    return WheelCodec.decodeHeader(devices.get(Bytes.wrap(WheelCodec.device("bob", "phone"))));
  }

  private List<AckTimeout> timeouts() {
    return context.forwarded(NAMES.timeoutsSink()).stream().map(f -> (AckTimeout) f.record().value()).toList();
  }
}
