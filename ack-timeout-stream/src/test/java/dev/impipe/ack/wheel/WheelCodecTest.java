package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.ack.wheel.DeviceTimers.Run;
import dev.impipe.ack.wheel.WheelCodec.SlotKey;
import dev.impipe.runtime.streams.VersionedValue;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class WheelCodecTest {

  private static final Run RUN = new Run(101, 105, 1_700_000_000L, 1_700_000_000_123L, 1_700_000_015_123L,
      1_700_000_015_200L, 3);

  @Test
  void keysAndValuesRoundTrip() {
    assertThat(WheelCodec.decodeSlot(WheelCodec.slot(42, "ålice", "📱"))).isEqualTo(new SlotKey(42, "ålice", "📱"));
    DeviceTimers timers = new DeviceTimers(100, 5, List.of(RUN, new Run(107, 107, 1, 2, 3, 4, 1)));
    DeviceTimers back = WheelCodec.decodeDevice(WheelCodec.deviceValue(timers), 6);
    assertThat(back.ackedSeq()).isEqualTo(100);
    assertThat(back.ackedAt()).isEqualTo(5);
    assertThat(back.runs()).isEqualTo(timers.runs());
    assertThat(WheelCodec.decodeHeader(WheelCodec.deviceValue(timers)))
        .isEqualTo(new WheelCodec.DeviceHeader(100, 5, 2));
    DeviceTimers none = WheelCodec.decodeDevice(WheelCodec.deviceValue(DeviceTimers.empty()), 1);
    assertThat(none.isEmpty()).isTrue();
    assertThat(WheelCodec.deviceValue(timers)).hasSize(1 + 8 + 8 + 4 + 2 * WheelCodec.RUN_BYTES);
  }

  @Test
  void byteOrderOfSlotsIsNumericOrder() {
    long[] numbers = {Long.MIN_VALUE, -256, -1, 0, 1, 255, 256, 65_536, 1_700_000_000_000L, Long.MAX_VALUE};
    for (int i = 1; i < numbers.length; i++) {
      assertThat(compare(WheelCodec.slotStart(numbers[i - 1]), WheelCodec.slotStart(numbers[i])))
          .as("%d < %d", numbers[i - 1], numbers[i]).isNegative();
      assertThat(compare(WheelCodec.slot(numbers[i - 1], "u", "d"), WheelCodec.slot(numbers[i], "a", "a")))
          .isNegative();
    }
  }

  @Test
  void slotRangeHoldsExactlyItsSlots() {
    // [slotStart(5), slotStart(7)] holds every key of slots 5 and 6, none of 4 or 7.
    byte[] from = WheelCodec.slotStart(5);
    byte[] to = WheelCodec.slotStart(7);
    List<byte[]> inside = List.of(WheelCodec.slot(5, "", ""), WheelCodec.slot(6, "zz", "zz"));
    List<byte[]> outside = List.of(WheelCodec.slot(4, "\uffff", "\uffff"), WheelCodec.slot(7, "", ""));
    inside.forEach(k -> assertThat(compare(from, k) <= 0 && compare(k, to) <= 0).isTrue());
    outside.forEach(k -> assertThat(compare(from, k) <= 0 && compare(k, to) <= 0).isFalse());
  }

  @Test
  void deviceKeysOfIdsThatExtendEachOtherDiffer() {
    // Without the string terminator "ab"|"c" and "a"|"bc" would be the same key.
    assertThat(WheelCodec.device("ab", "c")).isNotEqualTo(WheelCodec.device("a", "bc"));
    assertThat(WheelCodec.slot(1, "ab", "c")).isNotEqualTo(WheelCodec.slot(1, "a", "bc"));
  }

  @Test
  void valuesCarryAVersionAndAnUnknownOneIsRejected() {
    byte[] value = WheelCodec.deviceValue(new DeviceTimers(1, 2, List.of(RUN)));
    assertThat(value[0]).isEqualTo((byte) 1);
    value[0] = 2;
    assertThatThrownBy(() -> WheelCodec.decodeDevice(value, 10))
        .isInstanceOf(VersionedValue.UnknownVersionException.class)
        .hasMessageContaining("ack-devices value has version 2");
  }

  @Test
  void aHostileValueIsRefusedBeforeItCostsAnything() {
    // a run count the bytes do not hold
    byte[] lying = WheelCodec.deviceValue(new DeviceTimers(1, 2, List.of(RUN)));
    ByteBuffer.wrap(lying).putInt(1 + 16, Integer.MAX_VALUE);
    assertThatThrownBy(() -> WheelCodec.decodeDevice(lying, 10))
        .isInstanceOf(VersionedValue.MalformedValueException.class).hasMessageContaining("runs in");
    // more pending seqs than allowed, or a run longer than the seq space
    byte[] big = WheelCodec.deviceValue(new DeviceTimers(DeviceTimers.NO_ACK, 0, List.of(RUN)));
    assertThatThrownBy(() -> WheelCodec.decodeDevice(big, 4))
        .isInstanceOf(VersionedValue.MalformedValueException.class).hasMessageContaining("more than 4");
    assertThat(WheelCodec.decodeDevice(big, 5).pendingSeqs()).isEqualTo(5);
    byte[] two = WheelCodec.deviceValue(new DeviceTimers(DeviceTimers.NO_ACK, 0, List.of(RUN, RUN.seqs(107, 108))));
    assertThat(WheelCodec.decodeDevice(two, 7).pendingSeqs()).isEqualTo(7);
    assertThatThrownBy(() -> WheelCodec.decodeDevice(two, 6)).as("the bound counts every run")
        .isInstanceOf(VersionedValue.MalformedValueException.class).hasMessageContaining("more than 6");
    byte[] huge = WheelCodec.deviceValue(new DeviceTimers(DeviceTimers.NO_ACK, 0,
        List.of(new Run(Long.MIN_VALUE, Long.MAX_VALUE, 1, 1, 1, 1, 1))));
    assertThatThrownBy(() -> WheelCodec.decodeDevice(huge, Long.MAX_VALUE))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
    // runs out of order, overlapping, or at or below the ACK
    assertThatThrownBy(() -> WheelCodec.decodeDevice(WheelCodec.deviceValue(new DeviceTimers(DeviceTimers.NO_ACK, 0,
        List.of(RUN, RUN.seqs(105, 106)))), 100)).isInstanceOf(VersionedValue.MalformedValueException.class);
    assertThatThrownBy(() -> WheelCodec.decodeDevice(WheelCodec.deviceValue(new DeviceTimers(101, 0,
        List.of(RUN))), 100)).isInstanceOf(VersionedValue.MalformedValueException.class);
    assertThat(WheelCodec.decodeDevice(WheelCodec.deviceValue(new DeviceTimers(100, 0, List.of(RUN))), 100)
        .runs()).containsExactly(RUN);
    // bytes after the runs
    byte[] longer = Arrays.copyOf(WheelCodec.deviceValue(new DeviceTimers(1, 2, List.of())), 22);
    assertThatThrownBy(() -> WheelCodec.decodeDevice(longer, 10))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
  }

  private static int compare(byte[] a, byte[] b) {
    // Kafka Streams' (and RocksDB's default) order: unsigned lexicographic.
    return Arrays.compareUnsigned(a, b);
  }

  @Test
  void aDeviceWithAnAckAndNoRunsDecodes() {
    DeviceTimers acked = new DeviceTimers(100, 5, List.of());

    DeviceTimers back = WheelCodec.decodeDevice(WheelCodec.deviceValue(acked), 1);

    assertThat(back.ackedSeq()).isEqualTo(100);
    assertThat(back.runs()).isEmpty();
  }

  @Test
  void aRunThatStartsAtOrBeforeTheSeqBeforeItIsRefused() {
    byte[] value = WheelCodec.deviceValue(new DeviceTimers(100, 5, List.of(RUN, new Run(107, 107, 1, 2, 3, 4, 1))));
    int firstRun = 1 + 8 + 8 + 4;

    // The second run starting at the first one's last seq
    byte[] overlapping = value.clone();
    ByteBuffer.wrap(overlapping).putLong(firstRun + WheelCodec.RUN_BYTES, 105);
    // The first run starting at the ACKed seq
    byte[] acked = value.clone();
    ByteBuffer.wrap(acked).putLong(firstRun, 100);

    assertThatThrownBy(() -> WheelCodec.decodeDevice(overlapping, 10)).hasMessageContaining("after seq 105");
    assertThatThrownBy(() -> WheelCodec.decodeDevice(acked, 10)).hasMessageContaining("after seq 100");
  }

  @Test
  void withoutAnAckARunMayStartAtTheLowestSeq() {
    Run lowest = new Run(Long.MIN_VALUE, Long.MIN_VALUE + 1, 1, 2, 3, 4, 1);

    DeviceTimers back = WheelCodec.decodeDevice(
        WheelCodec.deviceValue(new DeviceTimers(DeviceTimers.NO_ACK, 0, List.of(lowest))), 10);

    assertThat(back.runs()).containsExactly(lowest);
  }
}
