package dev.impipe.delay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.streams.OrderedKey;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Where a sweep resumes, where new schedules are filed, and when its position record moves. */
class SweepCursorTest {

  private static final long SEGMENT = 1_000;

  private static byte[] key(long due, String id) {
    return ScheduleCodec.scheduleKey(due, id.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aFreshTaskStartsAtTheEpochAndHasWrittenNoPosition() {
    SweepCursor cursor = new SweepCursor(null, SEGMENT);

    assertThat(cursor.resumeFrom()).isEqualTo(ScheduleCodec.duePrefix(0));
    assertThat(cursor.fileFromMs()).isZero();
    SweepCursor.Move first = cursor.move(false, 3);
    assertThat(first.ts()).isEqualTo(ScheduleRules.STORE_RETENTION_MS - 1);
    assertThat(first.previousTs()).isEqualTo(SweepCursor.Move.NONE);
    assertThat(first.position().pending()).isEqualTo(3);
  }

  @Test
  void aRestartedTaskResumesFromItsStoredPositionAndDoesNotRewriteItUnmoved() {
    byte[] resume = OrderedKey.after(key(2_500, "a"));
    SweepCursor cursor = new SweepCursor(new ScheduleCodec.Position(resume, 2_501, 7), SEGMENT);

    assertThat(cursor.resumeFrom()).isEqualTo(resume);
    assertThat(cursor.fileFromMs()).isEqualTo(2_501);
    assertThat(cursor.move(false, 7)).isNull();
    SweepCursor.Move delivered = cursor.move(true, 6);
    assertThat(delivered.ts()).isEqualTo(2_000 + ScheduleRules.STORE_RETENTION_MS - 1);
    assertThat(delivered.previousTs()).isEqualTo(SweepCursor.Move.NONE);
  }

  @Test
  void keysBelowTheCursorAreBehindItAndNothingIsDueBeforeIt() {
    SweepCursor cursor = new SweepCursor(null, SEGMENT);
    cursor.caughtUp(ScheduleCodec.duePrefix(2_001), 2_000);

    assertThat(cursor.behind(key(2_000, "a"))).isTrue();
    assertThat(cursor.behind(key(2_001, "a"))).isFalse();
    assertThat(cursor.behind(ScheduleCodec.duePrefix(2_001))).isFalse();
    assertThat(cursor.nothingBefore(ScheduleCodec.duePrefix(2_001))).isTrue();
    assertThat(cursor.nothingBefore(ScheduleCodec.duePrefix(2_000))).isTrue();
    assertThat(cursor.nothingBefore(ScheduleCodec.duePrefix(2_002))).isFalse();
    assertThat(cursor.fileFromMs()).isEqualTo(2_001);
  }

  @Test
  void aSweepStoppedAtItsBudgetResumesRightAfterItsLastKeyOrWhereItWasIfItDeliveredNothing() {
    SweepCursor cursor = new SweepCursor(null, SEGMENT);
    cursor.stoppedAfter(null);
    assertThat(cursor.resumeFrom()).isEqualTo(ScheduleCodec.duePrefix(0));
    assertThat(cursor.fileFromMs()).isZero();

    cursor.stoppedAfter(key(1_500, "b"));

    assertThat(cursor.resumeFrom()).isEqualTo(OrderedKey.after(key(1_500, "b")));
    assertThat(cursor.behind(key(1_500, "b"))).isTrue();
    assertThat(cursor.behind(key(1_500, "c"))).isFalse();
    assertThat(cursor.fileFromMs()).isEqualTo(1_501);
  }

  @Test
  void aPositionMovingIntoAnotherSegmentDeletesTheOldRecordOneInTheSameSegmentOverwritesIt() {
    SweepCursor cursor = new SweepCursor(null, SEGMENT);
    cursor.move(true, 0);
    cursor.caughtUp(ScheduleCodec.duePrefix(500), 499);
    SweepCursor.Move same = cursor.move(true, 0);
    assertThat(same.previousTs()).isEqualTo(SweepCursor.Move.NONE);
    assertThat(same.position().fileFromMs()).isEqualTo(500);
    assertThat(same.position().resumeFrom()).isEqualTo(ScheduleCodec.duePrefix(500));

    cursor.caughtUp(ScheduleCodec.duePrefix(1_200), 1_199);
    SweepCursor.Move next = cursor.move(false, 0);

    assertThat(next.ts()).isEqualTo(1_000 + ScheduleRules.STORE_RETENTION_MS - 1);
    assertThat(next.previousTs()).isEqualTo(ScheduleRules.STORE_RETENTION_MS - 1);
    assertThat(cursor.move(false, 0)).isNull();
  }
}
