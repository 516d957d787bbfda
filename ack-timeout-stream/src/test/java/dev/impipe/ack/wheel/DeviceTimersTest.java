package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.wheel.DeviceTimers.Delivered;
import dev.impipe.ack.wheel.DeviceTimers.Expired;
import dev.impipe.ack.wheel.DeviceTimers.Policy;
import dev.impipe.ack.wheel.DeviceTimers.Run;
import dev.impipe.ack.wheel.DeviceTimers.TimedOut;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * One device's wheel state: runs of pending seqs per slot, a cumulative ACK trimming them, the expiry of a slot.
 * Slots are 250 ms wide, the timeout 15 s, 3 attempts unless said otherwise.
 */
class DeviceTimersTest {

  private static final Policy POLICY = new Policy(15_000, 3, 250);
  private static final long MAX = 1_000;

  /** A push of {@code from..to} at {@code at}: deadline 15 s later, in that deadline's slot. */
  private static Delivered push(DeviceTimers t, long from, long to, long at, int attempt) {
    long deadline = at + 15_000;
    return t.deliver(from, to, WheelRules.slotOf(deadline, 250), at, deadline, attempt, MAX);
  }

  @Test
  void consecutivePushesIntoOneSlotExtendOneRun() {
    // Given an empty device
    DeviceTimers t = DeviceTimers.empty();
    // When 1, 2 and 3..5 are pushed within one slot's quarter second (deadlines 15.01 .. 15.2 s: slot 61)
    assertThat(push(t, 1, 1, 10, 1)).isEqualTo(new Delivered(1, 0, false));
    assertThat(push(t, 2, 2, 100, 1)).isEqualTo(new Delivered(1, 0, false));
    assertThat(push(t, 3, 5, 200, 1)).isEqualTo(new Delivered(3, 0, false));
    // Then one run holds them: the earliest push and deadline, the latest deadline
    assertThat(t.runs()).containsExactly(new Run(1, 5, 61, 10, 15_010, 15_200, 1));
    assertThat(t.slots()).containsExactly(61L);
    assertThat(t.pendingSeqs()).isEqualTo(5);
    assertThat(t.isEmpty()).isFalse();
  }

  @Test
  void aPushIntoAnotherSlotOrWithAnotherAttemptStartsARun() {
    DeviceTimers t = DeviceTimers.empty();
    push(t, 1, 1, 0, 1);
    push(t, 2, 2, 300, 1);
    push(t, 3, 3, 300, 2);
    push(t, 5, 5, 300, 2);
    assertThat(t.runs()).extracting(Run::fromSeq).containsExactly(1L, 2L, 3L, 5L);
    assertThat(t.slots()).containsExactly(60L, 62L);
  }

  @Test
  void aCumulativeAckTrimsThePrefixInsideARun() {
    // Given 1..5 in one run and 6 in the next slot
    DeviceTimers t = DeviceTimers.empty();
    push(t, 1, 5, 0, 1);
    push(t, 6, 6, 300, 1);
    // When 3 is ACKed at 1 s
    assertThat(t.ack(3, 1_000)).isEqualTo(3);
    // Then 4..6 are left, the ACK is remembered with its time
    assertThat(t.runs()).containsExactly(new Run(4, 5, 60, 0, 15_000, 15_000, 1),
        new Run(6, 6, 62, 300, 15_300, 15_300, 1));
    assertThat(t.ackedSeq()).isEqualTo(3);
    assertThat(t.ackedAt()).isEqualTo(1_000);
    // and an older ACK changes nothing, the same one again refreshes its time, a later one clears it all
    assertThat(t.ack(2, 2_000)).isZero();
    assertThat(t.ackedAt()).isEqualTo(1_000);
    assertThat(t.ack(3, 2_000)).isZero();
    assertThat(t.ackedAt()).isEqualTo(2_000);
    assertThat(t.ack(100, 3_000)).isEqualTo(3);
    assertThat(t.runs()).isEmpty();
    assertThat(t.slots()).isEmpty();
    assertThat(t.isEmpty()).as("the ACK is kept").isFalse();
  }

  @Test
  void anAckThatOvertookItsDeliveryWins() {
    // Given the device ACKed 9
    DeviceTimers t = DeviceTimers.empty();
    t.ack(9, 0);
    // When 8..10 are pushed afterwards (one range), then 9 alone
    assertThat(push(t, 8, 10, 0, 1)).isEqualTo(new Delivered(1, 2, false));
    assertThat(push(t, 9, 9, 0, 1)).isEqualTo(new Delivered(0, 1, false));
    // Then only 10 waits
    assertThat(t.runs()).containsExactly(new Run(10, 10, 60, 0, 15_000, 15_000, 1));
  }

  @Test
  void aRedeliveryInsideARunSplitsItAndKeepsTheFirstPush() {
    // Given 1..5 pushed at 0 (attempt 1)
    DeviceTimers t = DeviceTimers.empty();
    push(t, 1, 5, 0, 1);
    // When 3..4 are pushed again at 16 s (attempt 2)
    assertThat(push(t, 3, 4, 16_000, 2)).isEqualTo(new Delivered(0, 0, false));
    // Then 1..2 and 5 keep their slot, 3..4 wait for the new deadline with the first push kept
    assertThat(t.runs()).containsExactly(new Run(1, 2, 60, 0, 15_000, 15_000, 1),
        new Run(3, 4, 124, 0, 31_000, 31_000, 2), new Run(5, 5, 60, 0, 15_000, 15_000, 1));
    assertThat(t.pendingSeqs()).isEqualTo(5);
    // and an older attempt number does not lower the count
    push(t, 4, 4, 16_000, 1);
    assertThat(t.runs().get(1)).isEqualTo(new Run(3, 4, 124, 0, 31_000, 31_000, 2));
  }

  @Test
  void aRangeOverRunsAndGapsFillsTheGapsAndRefilesTheRuns() {
    // Given 2 and 4 pending (attempt 1, pushed at 0)
    DeviceTimers t = DeviceTimers.empty();
    push(t, 2, 2, 0, 1);
    push(t, 4, 4, 0, 1);
    // When 1..6 are pushed at 1 s
    assertThat(push(t, 1, 6, 1_000, 1)).isEqualTo(new Delivered(4, 0, false));
    // Then one run: all in the new slot, 2 and 4 keeping their first push (the run's earliest)
    assertThat(t.runs()).containsExactly(new Run(1, 6, 64, 0, 16_000, 16_000, 1));
    // and a range ending inside a run, starting before it
    DeviceTimers u = DeviceTimers.empty();
    push(u, 5, 9, 0, 1);
    assertThat(push(u, 3, 6, 1_000, 2)).isEqualTo(new Delivered(2, 0, false));
    assertThat(u.runs()).containsExactly(new Run(3, 6, 64, 0, 16_000, 16_000, 2),
        new Run(7, 9, 60, 0, 15_000, 15_000, 1));
  }

  @Test
  void aDeliveryBeyondTheBoundIsRefusedAndChangesNothing() {
    DeviceTimers t = DeviceTimers.empty();
    assertThat(t.deliver(1, 3, 60, 0, 15_000, 1, 4)).isEqualTo(new Delivered(3, 0, false));
    assertThat(t.deliver(4, 5, 60, 0, 15_000, 1, 4)).isEqualTo(new Delivered(0, 0, true));
    assertThat(t.deliver(3, 4, 60, 0, 15_000, 1, 4)).as("3 is pending already: one more").extracting(
        Delivered::refused).isEqualTo(false);
    assertThat(t.pendingSeqs()).isEqualTo(4);
    assertThat(t.deliver(Long.MAX_VALUE, Long.MAX_VALUE, 60, 0, 15_000, 1, 5)).isEqualTo(new Delivered(1, 0,
        false));
    assertThat(t.runs()).extracting(Run::toSeq).containsExactly(4L, Long.MAX_VALUE);
  }

  @Test
  void aDueRunTimesOutAndOnesOfLaterSlotsStay() {
    // Given 1..2 in slot 60 and 3 in slot 62
    DeviceTimers t = DeviceTimers.empty();
    push(t, 1, 2, 0, 3);
    push(t, 3, 3, 300, 3);
    // When slot 60 expires at 15 s (third attempt: final)
    Expired e = t.expire(60, 15_000, POLICY, 100);
    // Then 1..2 time out for good, 3 stays
    assertThat(e).isEqualTo(new Expired(List.of(new TimedOut(new Run(1, 2, 60, 0, 15_000, 15_000, 3), true)), 2,
        false));
    assertThat(t.runs()).containsExactly(new Run(3, 3, 62, 300, 15_300, 15_300, 3));
  }

  @Test
  void aDueRunBeforeItsLastAttemptAsksForARedeliveryWithAFullTimeout() {
    DeviceTimers t = DeviceTimers.empty();
    push(t, 1, 2, 0, 1);
    Expired e = t.expire(60, 15_100, POLICY, 100);
    assertThat(e.timeouts()).containsExactly(new TimedOut(new Run(1, 2, 60, 0, 15_000, 15_000, 1), false));
    assertThat(t.runs()).containsExactly(new Run(1, 2, 121, 0, 30_100, 30_100, 2));
    assertThat(t.slots()).isEqualTo(Set.of(121L));
  }

  @Test
  void aRunWhoseLatestDeadlineIsAheadGoesBackInNeverEarly() {
    // Given a run filed with 1 s slots (slot 16 = up to 16 s) whose seqs time out at 15.1 .. 15.9 s
    DeviceTimers t = new DeviceTimers(DeviceTimers.NO_ACK, 0, List.of(new Run(1, 3, 16, 0, 15_100, 15_900, 1)));
    // When this wheel (250 ms slots) reaches slot 16 at 4 s, and later at 15.5 s
    assertThat(t.expire(16, 4_000, POLICY, 100).timeouts()).isEmpty();
    // Then it went back in at the slot of its latest deadline, not its earliest
    assertThat(t.runs()).containsExactly(new Run(1, 3, 64, 0, 15_100, 15_900, 1));
    assertThat(t.expire(64, 16_000, POLICY, 100).timeouts()).hasSize(1);
  }

  @Test
  void aRoundsBudgetSplitsARunAndLeavesTheRestInItsSlot() {
    // Given 1..5 due, and 6 in the same slot with another attempt count
    DeviceTimers t = DeviceTimers.empty();
    push(t, 1, 5, 0, 3);
    t.deliver(6, 6, 60, 0, 15_000, 2, MAX);
    // When the round may handle 3 seqs
    Expired first = t.expire(60, 15_000, POLICY, 3);
    // Then 1..3 time out, 4..6 are left in the slot for the next round
    assertThat(first.timeouts()).containsExactly(new TimedOut(new Run(1, 3, 60, 0, 15_000, 15_000, 3), true));
    assertThat(first.seqs()).isEqualTo(3);
    assertThat(first.rest()).isTrue();
    assertThat(t.runs()).extracting(Run::fromSeq).containsExactly(4L, 6L);
    // and with a budget of 0 nothing moves
    assertThat(t.expire(60, 15_000, POLICY, 0)).isEqualTo(new Expired(List.of(), 0, true));
    Expired second = t.expire(60, 15_000, POLICY, 10);
    assertThat(second.seqs()).isEqualTo(3);
    assertThat(second.rest()).isFalse();
    assertThat(t.runs()).containsExactly(new Run(6, 6, 120, 0, 30_000, 30_000, 3));
  }

  @Test
  void aRangeEndingInAGapBeforeALaterRunKeepsTheRunsInSeqOrder() {
    // Given 5 and 10 pending in slot 60
    DeviceTimers t = DeviceTimers.empty();
    t.deliver(5, 5, 60, 0, 15_000, 1, MAX);
    t.deliver(10, 10, 60, 0, 15_000, 1, MAX);
    // When 4..6 are pushed into the same slot
    assertThat(t.deliver(4, 6, 60, 0, 15_000, 1, MAX)).isEqualTo(new Delivered(2, 0, false));
    // Then 4..6 are one run, before 10
    assertThat(t.runs()).containsExactly(new Run(4, 6, 60, 0, 15_000, 15_000, 1),
        new Run(10, 10, 60, 0, 15_000, 15_000, 1));
  }

  @Test
  void aRedeliveryRequestForPartOfARunKeepsTheRunsInSeqOrder() {
    // Given 1..5 due on their first attempt, and a round that may handle 3 seqs
    DeviceTimers t = DeviceTimers.empty();
    push(t, 1, 5, 0, 1);
    t.expire(60, 15_000, POLICY, 3);
    // Then 1..3 wait for their second attempt, 4..5 stay in the slot: in seq order
    assertThat(t.runs()).containsExactly(new Run(1, 3, 120, 0, 30_000, 30_000, 2),
        new Run(4, 5, 60, 0, 15_000, 15_000, 1));
  }

  @Test
  void aRunSplitByAPartialAckThenExpiresWithWhatIsLeft() {
    DeviceTimers t = DeviceTimers.empty();
    push(t, 1, 5, 0, 3);
    t.ack(2, 1_000);
    assertThat(t.dueSeqs(60)).isEqualTo(3);
    assertThat(t.dueSeqs(59)).isZero();
    Expired e = t.expire(60, 15_000, POLICY, 100);
    assertThat(e.timeouts()).containsExactly(new TimedOut(new Run(3, 5, 60, 0, 15_000, 15_000, 3), true));
    assertThat(t.runs()).isEmpty();
    assertThat(t.isEmpty()).as("the ACK stays").isFalse();
    assertThat(DeviceTimers.empty().isEmpty()).isTrue();
  }

  @Test
  void expiringASlotAlsoTakesOlderOnesAndRejoinsWhatItRefiled() {
    // Given 1 in slot 59, 2 in slot 60 (both attempt 1)
    DeviceTimers t = new DeviceTimers(DeviceTimers.NO_ACK, 0, List.of(new Run(1, 1, 59, 0, 14_750, 14_750, 1),
        new Run(2, 2, 60, 10, 15_000, 15_000, 1)));
    // When slot 60 expires: both ask for a redelivery and land in one slot, one run again
    Expired e = t.expire(60, 15_000, POLICY, 100);
    assertThat(e.timeouts()).hasSize(2);
    assertThat(t.runs()).containsExactly(new Run(1, 2, 120, 0, 30_000, 30_000, 2));
  }
}
