package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.InputLag;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** How far the wheel's inputs are known to have been read, from end-offset marks or, without them, record times. */
class InputMarksTest {

  private static final long GRACE = 10_000;
  private static final long TOLERANCE = 1_000;
  private static final long IDLE = 5_000;
  private static final long T0 = 1_000_000;

  private static Optional<InputLag.Ends> ends(long end, long position) {
    return Optional.of(new InputLag.Ends(end, position));
  }

  /** Both inputs read at offset 0 at T0, and a round at T0 that noted a mark at {@code end} for both. */
  private static InputMarks markedAtT0(long end) {
    InputMarks marks = started();
    marks.deliveryRead(T0, T0, 0);
    marks.ackRead(T0, T0, 0);
    marks.ends(T0, ends(end, 1), ends(end, 1));
    return marks;
  }

  private static InputMarks started() {
    return started(new ArrayList<>());
  }

  private static InputMarks started(List<Long> waits) {
    InputMarks marks = new InputMarks(GRACE, TOLERANCE, IDLE, waits::add);
    marks.start(T0);
    return marks;
  }

  @Test
  void aWaitIsTheTimeAnInputWentWithoutARecordWhileItsNextOneWasWritten() {
    List<Long> waits = new ArrayList<>();
    InputMarks marks = started(waits);
    // written when the task started, read 3 s after: the records waited 3 s
    marks.ackRead(T0 + 3_000, T0, 0);
    // written before that read, read 7 s after it: the input went 7 s without a record while this one waited
    marks.ackRead(T0 + 10_000, T0 + 1_000, 1);
    // written while the input was quiet, read 20 s after the last read: the input had nothing waiting
    marks.deliveryRead(T0 + 20_000, T0 + 19_990, 0);
    // waited exactly the tolerance: told; less than the tolerance: not told
    marks.deliveryRead(T0 + 20_000 + TOLERANCE, T0 + 19_995, 1);
    marks.deliveryRead(T0 + 20_000 + 2 * TOLERANCE - 1, T0 + 19_996, 2);

    assertThat(waits).containsExactly(3_000L, 7_000L, TOLERANCE);
  }

  @Test
  void withoutRecordsOrEndsBothInputsAreIdleAfterTheIdleTimeAndTheHorizonIsTheWallClock() {
    InputMarks marks = started();

    // now: within the idle time of the start, nothing read: both inputs may hold a backlog, grace bounds it
    assertThat(marks.horizon(T0 + 1_000)).isEqualTo(T0 + 1_000 - GRACE);
    // now: the idle time after the start
    assertThat(marks.horizon(T0 + IDLE)).isEqualTo(T0 + IDLE);
    assertThat(marks.waiting()).isFalse();
  }

  @Test
  void freshRecordsOnBothInputsKeepTheHorizonAtTheWallClock() {
    InputMarks marks = started();
    marks.deliveryRead(T0 + 100, T0 + 50, 0);
    marks.ackRead(T0 + 100, T0 + 100 - TOLERANCE, 0);

    assertThat(marks.horizon(T0 + 200)).isEqualTo(T0 + 200);
  }

  @Test
  void aLaggingInputHoldsTheHorizonAtTheSmallerNewestRecordTimeButNoMoreThanTheGraceBehind() {
    InputMarks marks = started();
    marks.deliveryRead(T0 + 100, T0 + 90, 0);
    marks.ackRead(T0 + 100, T0 - 20_000, 0);

    assertThat(marks.horizon(T0 + 200)).isEqualTo(T0 + 200 - GRACE);
    marks.ackRead(T0 + 150, T0 - 3_000, 1);
    assertThat(marks.horizon(T0 + 200)).isEqualTo(T0 - 3_000);
  }

  @Test
  void anInputReadTooLongAgoIsNotCurrentAndOneIdleIsLeftOut() {
    InputMarks marks = started();
    marks.deliveryRead(T0, T0, 0);
    marks.ackRead(T0, T0 - 2_000, 0);

    // now: past the tolerance since the last record, both still active: the watermark holds
    assertThat(marks.horizon(T0 + TOLERANCE)).isEqualTo(T0 - 2_000);
    // now: the ACKs went idle, the deliveries too: the wall clock
    assertThat(marks.horizon(T0 + IDLE)).isEqualTo(T0 + IDLE);
  }

  @Test
  void withEndsTheHorizonIsTheNewestMarkBothInputsAreProcessedUpTo() {
    InputMarks marks = started();
    marks.deliveryRead(T0, T0, 4);
    marks.ackRead(T0, T0, 2);

    // a round at T0+100: the deliveries end at 10 (5 unprocessed, handed over), the ACKs at 3 (processed)
    marks.ends(T0 + 100, ends(10, 5), ends(3, 3));
    assertThat(marks.waiting()).isTrue();
    // no mark reached, the deliveries being processed: nothing is known to be read
    assertThat(marks.horizon(T0 + 100)).isEqualTo(Long.MIN_VALUE);

    // processed up to offset 9: the mark of T0+100 is reached
    marks.deliveryRead(T0 + 150, T0 + 150, 9);
    assertThat(marks.horizon(T0 + 200)).isEqualTo(T0 + 100);
    assertThat(marks.waiting()).isFalse();
  }

  @Test
  void anInputBeingProcessedHoldsTheHorizonHoweverFarBehindItIs() {
    InputMarks marks = started();
    marks.deliveryRead(T0, T0, 0);
    marks.ackRead(T0, T0, 0);
    // a round at T0+100: both inputs end at 1,000 (a backlog the wheel works through)
    marks.ends(T0 + 100, ends(1_000, 100), ends(1_000, 100));
    marks.ends(T0 + 2 * GRACE, ends(3_000, 500), ends(3_000, 500));

    // processing goes on, slower than the input grows: 3 grace periods later, still short of the first mark
    for (long t = T0 + 1_000, offset = 1; t <= T0 + 3 * GRACE; t += 1_000, offset += 30) {
      marks.deliveryRead(t, t - 5_000, offset);
      marks.ackRead(t, t - 5_000, offset);
    }
    // the marks older than the grace were dropped; what is left is not reached: nothing fires on the wall clock
    assertThat(marks.horizon(T0 + 3 * GRACE)).isEqualTo(Long.MIN_VALUE);

    // once processed up to the mark of T0 + 2 grace, everything written before it is read
    marks.deliveryRead(T0 + 3 * GRACE + 1, T0, 2_999);
    marks.ackRead(T0 + 3 * GRACE + 1, T0, 2_999);
    assertThat(marks.horizon(T0 + 3 * GRACE + 2)).isGreaterThanOrEqualTo(T0 + 2 * GRACE);
  }

  @Test
  void anInputThatProcessesNothingForTheGraceNoLongerHoldsDueSlots() {
    InputMarks marks = started();
    marks.deliveryRead(T0, T0, 4);
    marks.ackRead(T0, T0, 2);
    // the ACKs are processed to their end; the deliveries stop at offset 4 of 10
    marks.ends(T0 + 100, ends(10, 5), ends(3, 3));

    // just short of the grace since the deliveries' last record: held
    assertThat(marks.horizon(T0 + GRACE - 1)).isEqualTo(Long.MIN_VALUE);
    // a grace without progress: stuck, the horizon follows the wall clock a grace behind
    assertThat(marks.horizon(T0 + GRACE)).isEqualTo(T0);
    assertThat(marks.horizon(T0 + GRACE + 5_000)).isEqualTo(T0 + 5_000);

    // the ACKs stuck behind a mark while the deliveries are processed: stuck too
    InputMarks acksStuck = started();
    acksStuck.deliveryRead(T0, T0, 4);
    acksStuck.ackRead(T0, T0, 2);
    acksStuck.ends(T0 + 100, ends(10, 5), ends(9, 3));
    acksStuck.deliveryRead(T0 + GRACE, T0 + GRACE, 6);
    assertThat(acksStuck.horizon(T0 + GRACE)).isEqualTo(T0);
  }

  @Test
  void marksOlderThanTheGraceAreDropped() {
    InputMarks marks = markedAtT0(5);
    assertThat(marks.waiting()).isTrue();

    marks.ends(T0 + GRACE + 1, ends(9, 1), ends(9, 1));
    marks.deliveryRead(T0 + GRACE + 2, T0, 8);
    marks.ackRead(T0 + GRACE + 2, T0, 8);

    assertThat(marks.horizon(T0 + GRACE + 3)).isEqualTo(T0 + GRACE + 1);
  }

  @Test
  void aRoundWithoutEndsGoesOnWaitingForTheMarksNotReachedYet() {
    // a mark at T0: 99 records of each input still to process
    InputMarks marks = markedAtT0(100);

    // processing goes on, more than a grace behind, and the rounds' end offsets are not answered
    marks.deliveryRead(T0 + 3 * GRACE, T0 + 100, 50);
    marks.ackRead(T0 + 3 * GRACE, T0 + 100, 50);
    marks.ends(T0 + 3 * GRACE, Optional.empty(), Optional.empty());
    marks.ends(T0 + 3 * GRACE + 250, ends(100, 100), Optional.empty());

    // nothing fires on the record times, a grace behind: the ACKs written before T0 are not all read
    assertThat(marks.horizon(T0 + 3 * GRACE + 300)).isLessThan(T0);
    assertThat(marks.waiting()).isTrue();
    // processed past the mark: everything written before T0 is read
    marks.deliveryRead(T0 + 3 * GRACE + 400, T0 + 200, 99);
    marks.ackRead(T0 + 3 * GRACE + 400, T0 + 200, 99);
    assertThat(marks.horizon(T0 + 3 * GRACE + 400)).isGreaterThanOrEqualTo(T0);
  }

  @Test
  void endsThatDoNotTellForBothInputsLeaveItToTheRecordTimes() {
    InputMarks marks = started();
    marks.deliveryRead(T0, T0, 4);
    marks.ackRead(T0, T0 - 2_000, 2);

    // ACKs: fetched but not handed over yet (position at the end): cannot tell
    marks.ends(T0 + 100, ends(10, 10), ends(9, 9));
    assertThat(marks.waiting()).isFalse();
    assertThat(marks.horizon(T0 + 100)).isEqualTo(T0 - 2_000);

    // both processed to their ends: nothing holds back
    marks.ends(T0 + 200, ends(5, 5), ends(3, 3));
    assertThat(marks.horizon(T0 + 200)).isEqualTo(T0 + 200);

    // unknown ends of the deliveries, read just now and fresh; the ACKs processed to their end hold nothing back
    marks.ends(T0 + 300, Optional.empty(), ends(3, 3));
    assertThat(marks.waiting()).isFalse();
    assertThat(marks.horizon(T0 + 300)).isEqualTo(T0 + 300);
  }

  @Test
  void unprocessedRecordsHoldTheHorizonBackHoweverLongNothingWasRead() {
    InputMarks marks = started();
    marks.deliveryRead(T0, T0 - 500, 4);
    marks.ackRead(T0, T0 - 700, 2);
    // deliveries: 3 records not handed over; ACKs: unknown position
    marks.ends(T0 + 100, ends(10, 7), Optional.empty());

    assertThat(marks.horizon(T0 + 2 * IDLE)).isEqualTo(T0 + 2 * IDLE - GRACE);
  }

  @Test
  void freshDeliveriesAloneAreCurrentForLessThanTheTolerance() {
    InputMarks marks = started();
    // The ACKs were never read: idle from T0 + IDLE on
    long read = T0 + IDLE + 1_000;
    marks.deliveryRead(read, read, 0);

    assertThat(marks.horizon(read + TOLERANCE - 1)).isEqualTo(read + TOLERANCE - 1);
    // Not read for the tolerance: the deliveries' newest record time
    assertThat(marks.horizon(read + TOLERANCE)).isEqualTo(read);
  }

  @Test
  void freshAcksAloneAreCurrentForLessThanTheTolerance() {
    InputMarks marks = started();
    long read = T0 + IDLE + 1_000;
    marks.ackRead(read, read, 0);

    assertThat(marks.horizon(read + TOLERANCE - 1)).isEqualTo(read + TOLERANCE - 1);
    assertThat(marks.horizon(read + TOLERANCE)).isEqualTo(read);
  }

  @Test
  void aRecordReadExactlyTheToleranceAfterItWasWrittenIsStillCaughtUp() {
    InputMarks deliveries = started();
    long read = T0 + IDLE + 1_000;
    deliveries.deliveryRead(read, read - TOLERANCE, 0);
    InputMarks acks = started();
    acks.ackRead(read, read - TOLERANCE, 0);

    assertThat(deliveries.horizon(read + 1)).isEqualTo(read + 1);
    assertThat(acks.horizon(read + 1)).isEqualTo(read + 1);

    // One more millisecond behind: a backlog, the newest record time holds
    deliveries.deliveryRead(read + 1, read - TOLERANCE, 1);
    acks.ackRead(read + 1, read - TOLERANCE, 1);
    assertThat(deliveries.horizon(read + 2)).isEqualTo(read - TOLERANCE);
    assertThat(acks.horizon(read + 2)).isEqualTo(read - TOLERANCE);
  }
}
