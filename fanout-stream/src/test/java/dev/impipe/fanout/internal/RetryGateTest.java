package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The dedupe of retried sends: the store decides, the filter only skips reads it knows are needless. */
class RetryGateTest {

  private static final long DAY = Duration.ofDays(1).toMillis();

  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final FanoutMetrics metrics = new FanoutMetrics(meters);
  private final MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
  private final WindowStore<Bytes, byte[]> store = Stores.windowStoreBuilder(Stores.inMemoryWindowStore("dedupe",
      Duration.ofDays(2), Duration.ofDays(1), false), Serdes.Bytes(), Serdes.ByteArray())
      .withLoggingDisabled().withCachingDisabled().build();

  RetryGateTest() {
    store.init(context.getStateStoreContext(), store);
  }

  @AfterEach
  void tearDown() {
    store.close();
  }

  private static Bytes key(String clientMsgId) {
    return SentCodec.dedupeKey("alice", "c", clientMsgId);
  }

  private FanoutConfig config(int filterMb) {
    FanoutConfig d = FanoutConfig.defaults();
    return new FanoutConfig(Duration.ofMillis(DAY), d.recallWindow(), d.largeGroupThreshold(), filterMb,
        d.groupMaxMembers(), d.maxEntriesPerRound(), d.modeSwitchInterval());
  }

  private double count(String name) {
    return meters.get(name).counter().count();
  }

  private double filterBytes() {
    return meters.get("im.fanout.dedupe.filter.bytes").gauge().value();
  }

  @Test
  void aKeyPutWithinTheWindowIsSeenOneOutsideItOrNeverPutIsNot() {
    RetryGate gate = new RetryGate(config(1), metrics, store);

    assertThat(gate.seen(key("m1"), 10 * DAY)).isFalse();
    gate.put(key("m1"), "id-1", 10 * DAY);

    assertThat(gate.seen(key("m1"), 10 * DAY + 1_000)).isTrue();
    assertThat(gate.seen(key("m2"), 10 * DAY + 1_000)).isFalse();
    assertThat(count("im.fanout.duplicates")).isEqualTo(1);
    // the filter knew m2 (and the first m1) were never put: no store read for them
    assertThat(count("im.fanout.dedupe.skipped")).isEqualTo(2);
    assertThat(count("im.fanout.dedupe.reads")).isEqualTo(1);
    assertThat(filterBytes()).isPositive().isLessThanOrEqualTo(1024 * 1024);
  }

  @Test
  void theFilterIsBuiltFromWhatTheStoreAlreadyHolds() {
    store.put(key("m1"), SentCodec.dedupeValue("id-1"), 10 * DAY);
    RetryGate gate = new RetryGate(config(1), metrics, store);

    assertThat(gate.seen(key("m1"), 10 * DAY + 5)).isTrue();
  }

  @Test
  void withoutAFilterEveryCheckReadsTheStore() {
    RetryGate gate = new RetryGate(config(0), metrics, store);
    gate.put(key("m1"), "id-1", 10 * DAY);

    assertThat(gate.seen(key("m1"), 10 * DAY)).isTrue();
    assertThat(gate.seen(key("m2"), 10 * DAY)).isFalse();
    assertThat(count("im.fanout.dedupe.reads")).isEqualTo(2);
    assertThat(count("im.fanout.dedupe.skipped")).isZero();
    assertThat(filterBytes()).isZero();
  }

  @Test
  void aResetDropsTheFilterAndItsHeapFromTheGauge() {
    RetryGate gate = new RetryGate(config(1), metrics, store);
    gate.seen(key("m1"), 10 * DAY);
    gate.put(key("m1"), "id-1", 10 * DAY);
    assertThat(filterBytes()).isPositive();

    gate.reset();

    assertThat(filterBytes()).isZero();
    assertThat(gate.seen(key("m1"), 10 * DAY)).isTrue();
    assertThat(filterBytes()).isPositive();
  }

  @Test
  void asRecordsMoveOnTheFilterForgetsBucketsOlderThanTheWindowAndRecordsThatOldReadTheStore() {
    RetryGate gate = new RetryGate(config(1), metrics, store);
    gate.seen(key("m1"), 10 * DAY);
    gate.put(key("m1"), "id-1", 10 * DAY);
    assertThat(filterBytes()).isPositive();

    // Ten days on: m1's bucket is beyond any window asked about now
    assertThat(gate.seen(key("m2"), 20 * DAY)).isFalse();

    assertThat(filterBytes()).isZero();
    double reads = count("im.fanout.dedupe.reads");
    // A late record from the old days: the filter no longer knows, the store answers
    assertThat(gate.seen(key("m1"), 10 * DAY)).isTrue();
    assertThat(count("im.fanout.dedupe.reads")).isEqualTo(reads + 1);
  }
}
