package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.ack.wheel.WheelCodec.Pending;
import dev.impipe.ack.wheel.WheelCodec.PendingKey;
import dev.impipe.ack.wheel.WheelCodec.WheelKey;
import dev.impipe.runtime.streams.VersionedValue;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class WheelCodecTest {

  @Test
  void keysRoundTrip() {
    assertThat(WheelCodec.decodeWheel(WheelCodec.wheel(42, "alice", "phone", 101)))
        .isEqualTo(new WheelKey(42, "alice", "phone", 101));
    assertThat(WheelCodec.decodePending(WheelCodec.pending("ålice", "📱", -7)))
        .isEqualTo(new PendingKey("ålice", "📱", -7));
    Pending p = new Pending(1_700_000_000L, 1_700_000_000_123L, 1_700_000_015_123L, 3);
    assertThat(WheelCodec.decodePendingValue(WheelCodec.pendingValue(p))).isEqualTo(p);
    assertThat(WheelCodec.decodeSeqValue(WheelCodec.ackedValue(Long.MAX_VALUE, 5))).isEqualTo(Long.MAX_VALUE);
    assertThat(WheelCodec.decodeAckedAt(WheelCodec.ackedValue(Long.MAX_VALUE, 5))).isEqualTo(5);
  }

  @Test
  void byteOrderOfSlotsAndSeqsIsNumericOrder() {
    long[] numbers = {Long.MIN_VALUE, -256, -1, 0, 1, 255, 256, 65_536, 1_700_000_000_000L, Long.MAX_VALUE};
    for (int i = 1; i < numbers.length; i++) {
      assertThat(compare(WheelCodec.slotStart(numbers[i - 1]), WheelCodec.slotStart(numbers[i])))
          .as("%d < %d", numbers[i - 1], numbers[i]).isNegative();
      assertThat(compare(WheelCodec.wheel(numbers[i - 1], "u", "d", 0), WheelCodec.wheel(numbers[i], "a", "a", 0)))
          .isNegative();
      assertThat(compare(WheelCodec.pending("u", "d", numbers[i - 1]), WheelCodec.pending("u", "d", numbers[i])))
          .isNegative();
    }
  }

  @Test
  void slotRangeHoldsExactlyItsSlots() {
    // [slotStart(5), slotStart(7)] holds every key of slots 5 and 6, none of 4 or 7.
    byte[] from = WheelCodec.slotStart(5);
    byte[] to = WheelCodec.slotStart(7);
    List<byte[]> inside = List.of(WheelCodec.wheel(5, "", "", Long.MIN_VALUE), WheelCodec.wheel(6, "zz", "zz", 9));
    List<byte[]> outside = List.of(WheelCodec.wheel(4, "\uffff", "\uffff", Long.MAX_VALUE),
        WheelCodec.wheel(7, "", "", Long.MIN_VALUE));
    inside.forEach(k -> assertThat(compare(from, k) <= 0 && compare(k, to) <= 0).isTrue());
    outside.forEach(k -> assertThat(compare(from, k) <= 0 && compare(k, to) <= 0).isFalse());
  }

  @Test
  void deviceRangeCannotReachAnotherDeviceWhoseIdExtendsThisOne() {
    // Without the string terminator "ab"|"c" and "a"|"bc" would share bytes; a range over device ("a","b") must
    // contain neither device ("a","bc") nor user "ab".
    byte[] from = WheelCodec.pending("a", "b", Long.MIN_VALUE);
    byte[] to = WheelCodec.pending("a", "b", Long.MAX_VALUE);
    List<byte[]> others = new ArrayList<>(List.of(
        WheelCodec.pending("a", "bc", 5), WheelCodec.pending("ab", "", 5), WheelCodec.pending("a", "", 5),
        WheelCodec.pending("a", "b\u0000", 0), WheelCodec.pending("", "ab", 3)));
    others.forEach(k -> assertThat(compare(from, k) <= 0 && compare(k, to) <= 0)
        .as(WheelCodec.decodePending(k).toString()).isFalse());
    assertThat(compare(from, WheelCodec.pending("a", "b", 0)) <= 0
        && compare(WheelCodec.pending("a", "b", 0), to) <= 0).isTrue();
  }

  @Test
  void valuesCarryAVersionAndAnUnknownOneIsRejected() {
    byte[] value = WheelCodec.pendingValue(new Pending(1, 2, 3, 4));
    assertThat(value[0]).isEqualTo((byte) 1);
    value[0] = 2;
    assertThatThrownBy(() -> WheelCodec.decodePendingValue(value))
        .isInstanceOf(VersionedValue.UnknownVersionException.class)
        .hasMessageContaining("ack-pending value has version 2");
    byte[] acked = WheelCodec.ackedValue(7, 8);
    acked[0] = 0;
    assertThatThrownBy(() -> WheelCodec.decodeSeqValue(acked))
        .isInstanceOf(VersionedValue.UnknownVersionException.class);
  }

  private static int compare(byte[] a, byte[] b) {
    // Kafka Streams' (and RocksDB's default) order: unsigned lexicographic.
    return Arrays.compareUnsigned(a, b);
  }
}
