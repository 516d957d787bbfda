package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.junit.jupiter.api.Test;

/** The rolling scan of the device records: what goes, where the next slice starts, when the next pass begins. */
class AckedSweepTest {

  private static final long RETENTION = 1_000;

  private static KeyValue<Bytes, byte[]> acked(String device, long at) {
    return KeyValue.pair(Bytes.wrap(device.getBytes()), WheelCodec.deviceValue(new DeviceTimers(1, at, List.of())));
  }

  private static List<Bytes> keys(List<KeyValue<Bytes, byte[]>> entries) {
    return entries.stream().map(kv -> kv.key).toList();
  }

  @Test
  void aFullPassRemovesWhatIsOlderThanTheRetentionAndTheNextStartsAfterATenth() {
    AckedSweep sweep = new AckedSweep(RETENTION, 10);
    assertThat(sweep.due(0)).isTrue();
    List<KeyValue<Bytes, byte[]>> store = List.of(acked("a", 0), acked("b", 500), acked("c", 1));

    List<Bytes> old = keys(sweep.slice(store.iterator(), 1_000, () -> true));

    assertThat(old).containsExactly(Bytes.wrap("a".getBytes()));
    assertThat(sweep.from()).isNull();
    assertThat(sweep.due(1_099)).isFalse();
    assertThat(sweep.due(1_100)).isTrue();
  }

  @Test
  void aDeviceWithPendingSeqsStaysHoweverOldItsAck() {
    AckedSweep sweep = new AckedSweep(RETENTION, 10);
    byte[] pending = WheelCodec.deviceValue(new DeviceTimers(1, 0, List.of(new DeviceTimers.Run(2, 2, 9, 0, 5, 5, 1))));
    List<KeyValue<Bytes, byte[]>> store = List.of(KeyValue.pair(Bytes.wrap("p".getBytes()), pending),
        acked("q", 0));

    assertThat(keys(sweep.slice(store.iterator(), 5_000, () -> true))).containsExactly(Bytes.wrap("q".getBytes()));
  }

  @Test
  void aSliceStopsAfterItsKeysAndTheNextGoesOnFromTheLastOneSeen() {
    AckedSweep sweep = new AckedSweep(RETENTION, 2);
    List<KeyValue<Bytes, byte[]>> store = List.of(acked("a", 0), acked("b", 0), acked("c", 0));

    assertThat(sweep.slice(store.iterator(), 5_000, () -> true)).hasSize(2);

    assertThat(sweep.from()).isEqualTo(Bytes.wrap("b".getBytes()));
    assertThat(sweep.due(5_001)).isTrue();
  }

  @Test
  void aSliceStopsWhenTheRoundsBudgetIsUsedUp() {
    AckedSweep sweep = new AckedSweep(RETENTION, 10);
    List<KeyValue<Bytes, byte[]>> store = List.of(acked("a", 0), acked("b", 0), acked("c", 0));
    AtomicInteger budget = new AtomicInteger(1);

    List<Bytes> old = keys(sweep.slice(store.iterator(), 5_000, () -> budget.getAndDecrement() > 0));

    assertThat(old).containsExactly(Bytes.wrap("a".getBytes()));
    assertThat(sweep.from()).isEqualTo(Bytes.wrap("b".getBytes()));
  }

  @Test
  void anUnreadableEntryGoesAndAnEmptyStoreFinishesAtOnce() {
    AckedSweep sweep = new AckedSweep(RETENTION, 10);
    List<KeyValue<Bytes, byte[]>> store = new ArrayList<>();
    store.add(KeyValue.pair(Bytes.wrap("x".getBytes()), new byte[] {1}));

    assertThat(keys(sweep.slice(store.iterator(), RETENTION, () -> true))).containsExactly(Bytes.wrap("x".getBytes()));
    assertThat(sweep.slice(List.<KeyValue<Bytes, byte[]>>of().iterator(), 2_000, () -> true)).isEmpty();
    assertThat(sweep.from()).isNull();
    assertThat(sweep.due(2_050)).isFalse();
  }
}
