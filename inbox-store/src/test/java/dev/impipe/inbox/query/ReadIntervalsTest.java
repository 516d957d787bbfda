package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.inbox.query.ReadIntervals.Interval;
import dev.impipe.runtime.streams.VersionedValue;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReadIntervalsTest {

  private static final long OPEN = Long.MAX_VALUE;

  @Test
  void joinsModeSwitchesAndLeavesOpenAndCloseIntervals() {
    // Given a join of a large group at conversation seq 5 (inbox seq 10, time 100)
    ReadIntervals joined = ReadIntervals.NONE.apply(5, true, 10, 100);
    assertThat(joined.intervals()).containsExactly(new Interval(5, OPEN, 10, OPEN, OPEN));

    // When the group turns small at seq 9, large again at 12, and the user leaves at 20
    ReadIntervals all = joined.apply(9, false, 11, 200).apply(12, true, 14, 300).apply(20, false, 17, 400);

    // Then two closed intervals remain, each with the inbox seqs that opened and closed it
    assertThat(all.intervals()).containsExactly(new Interval(5, 9, 10, 11, 200), new Interval(12, 20, 14, 17, 400));
    assertThat(all.openInterval()).isNull();
    assertThat(all.indexOf(4)).isEqualTo(-1);
    assertThat(all.indexOf(5)).isZero();
    assertThat(all.indexOf(9)).isEqualTo(-1);
    assertThat(all.indexOf(19)).isEqualTo(1);
    assertThat(all.indexOf(20)).isEqualTo(-1);
    assertThat(ReadIntervals.decode(all.encode())).isEqualTo(all);
    assertThat(ReadIntervals.decode(null)).isEqualTo(ReadIntervals.NONE);
  }

  @Test
  void anEmptyIntervalIsDroppedAndOldClosedOnesArePruned() {
    // A join and a leave with no message in between leaves nothing
    assertThat(ReadIntervals.NONE.apply(7, true, 1, 10).apply(7, false, 2, 20).isEmpty()).isTrue();

    // Closed intervals that ended before the cutoff go; the open one always stays
    ReadIntervals two = ReadIntervals.NONE.apply(1, true, 1, 10).apply(3, false, 2, 20).apply(5, true, 3, 30);
    assertThat(two.closedBefore(21).intervals()).containsExactly(new Interval(5, OPEN, 3, OPEN, OPEN));
    assertThat(two.closedBefore(20).intervals()).hasSize(2);
  }

  @Test
  void throughIsTheInboxSeqOfTheNewestEntryTheIntervalsReflect() {
    assertThat(ReadIntervals.NONE.through()).isEqualTo(-1);
    // joined at inbox seq 3, switched small at 7 (closing), large again at 9 (opening)
    ReadIntervals closed = ReadIntervals.NONE.apply(5, true, 3, 0).apply(9, false, 7, 0);
    assertThat(closed.through()).isEqualTo(7);
    assertThat(closed.apply(12, true, 9, 0).through()).isEqualTo(9);
    assertThat(ReadIntervals.NONE.apply(5, true, 3, 0).through()).isEqualTo(3);
  }

  @Test
  void rangesRoundTripAndBadRangesAreRefused() {
    ReadIntervals all = ReadIntervals.NONE.apply(5, true, 1, 1).apply(9, false, 2, 2).apply(12, true, 3, 3);
    assertThat(all.ranges()).isEqualTo("5-9,12-");
    List<long[]> parsed = ReadIntervals.parseRanges(all.ranges());
    assertThat(parsed).containsExactly(new long[] {5, 9}, new long[] {12, OPEN});
    assertThat(ReadIntervals.parseRanges("")).isEmpty();
    for (String bad : List.of("5", "-5", "9-5", "5-5", "5-9,7-12", "a-b", "5-9,,")) {
      assertThatThrownBy(() -> ReadIntervals.parseRanges(bad)).isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void rangesMayStartAtZeroAndTouchButNotOverlap() {
    // Given ranges from 0 and a range starting where the previous one ends
    assertThat(ReadIntervals.parseRanges("0-5,5-9,9-"))
        .containsExactly(new long[] {0, 5}, new long[] {5, 9}, new long[] {9, OPEN});
    assertThat(ReadIntervals.parseRanges(null)).isEmpty();
  }

  @Test
  void noIntervalsRoundTripAndTrailingBytesAreRefused() {
    // Given no intervals stored (a count of 0): they read back as none
    assertThat(ReadIntervals.decode(ReadIntervals.NONE.encode())).isEqualTo(ReadIntervals.NONE);
    // Given one interval: it is not empty, and a byte after it makes the value malformed
    ReadIntervals one = ReadIntervals.NONE.apply(5, true, 1, 1);
    assertThat(one.isEmpty()).isFalse();
    byte[] stored = one.encode();
    byte[] trailing = Arrays.copyOf(stored, stored.length + 1);
    assertThatThrownBy(() -> ReadIntervals.decode(trailing))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
  }
}
