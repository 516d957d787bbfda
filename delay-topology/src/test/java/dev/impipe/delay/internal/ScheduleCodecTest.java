package dev.impipe.delay.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ScheduleCodecTest {

  private static byte[] id(String id) {
    return id.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void byteOrderOfScheduleKeysIsDueOrder() {
    // Given dues across seconds, within a second, around powers of two and far in the future
    Random random = new Random(42);
    List<Long> dues = new ArrayList<>(List.of(0L, 1L, 255L, 256L, 999L, 1_000L, 1_001L, 65_535_000L,
        1_772_366_400_250L, 1_772_366_400_999L, 1_772_366_401_000L, 4_102_444_800_000L));
    for (int i = 0; i < 500; i++) {
      dues.add(Math.abs(random.nextLong() % 4_102_444_800_000L));
    }
    // When they are encoded with ids that sort the other way round
    List<byte[]> keys = new ArrayList<>();
    for (long due : dues) {
      keys.add(ScheduleCodec.scheduleKey(due, id("id-" + (Long.MAX_VALUE - due))));
    }
    keys.sort(Arrays::compareUnsigned);
    // Then unsigned byte order is numeric due order
    List<Long> decoded = keys.stream().map(ScheduleCodec::dueOf).toList();
    assertThat(decoded).isSortedAccordingTo(Comparator.naturalOrder());
    assertThat(decoded).containsExactlyInAnyOrderElementsOf(dues);
  }

  @Test
  void keyStartsWithTheDueTimeThenTheId() {
    byte[] key = ScheduleCodec.scheduleKey(1_772_366_400_250L, id("m-1"));

    assertThat(key).hasSize(ScheduleCodec.DUE_BYTES + 3);
    assertThat(ScheduleCodec.dueOf(key)).isEqualTo(1_772_366_400_250L);
    assertThat(ScheduleCodec.idOf(key)).isEqualTo(id("m-1"));
    assertThat(Arrays.copyOf(key, ScheduleCodec.DUE_BYTES)).isEqualTo(ScheduleCodec.duePrefix(1_772_366_400_250L));
    assertThat(ScheduleCodec.POSITION_KEY).hasSize(10).containsOnly((byte) 0xFF);
    assertThat(Arrays.compareUnsigned(key, ScheduleCodec.POSITION_KEY)).isNegative();
    assertThat(Arrays.compareUnsigned(ScheduleCodec.scheduleKey(4_102_444_800_000_000L, new byte[] {(byte) 0xF4}),
        ScheduleCodec.POSITION_KEY)).isNegative();
  }

  @Test
  void theIndexValueCarriesAVersionAndAnUnknownOneIsRejected() {
    byte[] value = ScheduleCodec.indexValue(1_000);
    assertThat(value).hasSize(9).startsWith(1);
    value[0] = 7;
    assertThatThrownBy(() -> ScheduleCodec.indexDue(value)).hasMessageContaining("delay index value has version 7");
  }

  @Test
  void duePrefixBoundsEveryKeyOfItsMillisecond() {
    long due = 1_772_366_400_250L;
    byte[] key = ScheduleCodec.scheduleKey(due, new byte[] {0});
    byte[] last = ScheduleCodec.scheduleKey(due, new byte[] {(byte) 0xFF, (byte) 0xFF});

    assertThat(Arrays.compareUnsigned(ScheduleCodec.duePrefix(due), key)).isNegative();
    assertThat(Arrays.compareUnsigned(last, ScheduleCodec.duePrefix(due + 1))).isNegative();
    assertThat(Arrays.compareUnsigned(ScheduleCodec.scheduleKey(due - 1, new byte[] {(byte) 0xFF}),
        ScheduleCodec.duePrefix(due))).isNegative();
  }

  @Test
  void dueTimesBeforeTheEpochAreFiledAtTheEpoch() {
    assertThat(ScheduleCodec.dueOf(ScheduleCodec.scheduleKey(-5_000, id("a")))).isZero();
    assertThat(ScheduleCodec.indexDue(ScheduleCodec.indexValue(-5_000))).isZero();
    assertThat(ScheduleCodec.indexDue(ScheduleCodec.indexValue(1_772_366_400_250L))).isEqualTo(1_772_366_400_250L);
  }

  @Test
  void emptyIdsAreRefused() {
    assertThatThrownBy(() -> ScheduleCodec.scheduleKey(1, new byte[0])).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void entriesRoundTripWithNullsAndHeaders() {
    Map<String, byte[]> headers = new LinkedHashMap<>();
    headers.put("trace", id("t-1"));
    headers.put("empty", new byte[0]);
    headers.put("nothing", null);
    ScheduledEntry entry = new ScheduledEntry(1_772_366_400_250L, "im.messages", id("conv"), new byte[] {0, 1, 2},
        headers);

    ScheduledEntry decoded = ScheduleCodec.decodeEntry(ScheduleCodec.encodeEntry(entry));

    assertThat(decoded.deliverAtMs()).isEqualTo(1_772_366_400_250L);
    assertThat(decoded.topic()).isEqualTo("im.messages");
    assertThat(decoded.key()).isEqualTo(id("conv"));
    assertThat(decoded.value()).containsExactly(0, 1, 2);
    assertThat(decoded.headers()).containsOnlyKeys("trace", "empty", "nothing");
    assertThat(decoded.headers().get("trace")).isEqualTo(id("t-1"));
    assertThat(decoded.headers().get("empty")).isEmpty();
    assertThat(decoded.headers().get("nothing")).isNull();

    ScheduledEntry tombstone = ScheduleCodec.decodeEntry(ScheduleCodec.encodeEntry(
        new ScheduledEntry(5, "t", null, null, Map.of())));
    assertThat(tombstone.key()).isNull();
    assertThat(tombstone.value()).isNull();
    assertThat(tombstone.headers()).isEmpty();
  }

  @Test
  void unknownEntryVersionsAreAnError() {
    byte[] bytes = ScheduleCodec.encodeEntry(new ScheduledEntry(5, "t", null, null, Map.of()));
    bytes[0] = 9;
    assertThatThrownBy(() -> ScheduleCodec.decodeEntry(bytes)).hasMessageContaining("version 9");
  }

  @Test
  void aHeaderNameMayHaveUpTo65535BytesNotOneMore() {
    String longest = "h".repeat(65_535);
    ScheduledEntry entry = new ScheduledEntry(5, "im.messages", null, null, Map.of(longest, id("v")));

    assertThat(ScheduleCodec.decodeEntry(ScheduleCodec.encodeEntry(entry)).headers()).containsOnlyKeys(longest);
    assertThatThrownBy(() -> ScheduleCodec.encodeEntry(
        new ScheduledEntry(5, "im.messages", null, null, Map.of(longest + "h", id("v")))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("65535");
  }

  @Test
  void thePositionRoundTripsAndAnUnknownVersionIsAnError() {
    ScheduleCodec.Position position = new ScheduleCodec.Position(ScheduleCodec.scheduleKey(1_000, id("a")), 1_001, 7);

    ScheduleCodec.Position back = ScheduleCodec.decodePosition(ScheduleCodec.encodePosition(position));

    assertThat(back.resumeFrom()).isEqualTo(position.resumeFrom());
    assertThat(back.fileFromMs()).isEqualTo(1_001);
    assertThat(back.pending()).isEqualTo(7);
    byte[] newer = ScheduleCodec.encodePosition(position);
    newer[0] = 2;
    assertThatThrownBy(() -> ScheduleCodec.decodePosition(newer))
        .isInstanceOf(dev.impipe.runtime.streams.VersionedValue.UnknownVersionException.class)
        .hasMessageContaining("version 2");
  }
}
