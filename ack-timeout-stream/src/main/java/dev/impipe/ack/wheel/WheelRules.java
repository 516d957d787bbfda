package dev.impipe.ack.wheel;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.ack.wheel.WheelCodec.Pending;
import java.util.OptionalLong;

/**
 * What the wheel decides, without stores: which slot a deadline lands in, what an ACK clears, and what a due timer
 * comes to (nothing, back in the wheel, a redelivery request or the final timeout).
 */
final class WheelRules {

  /**
   * Slots per tick: a deadline waits for the end of its slot, a quarter tick at most, which leaves the rest of the
   * tick for reading the inputs up to the slot's mark and committing, so a timeout is emitted within one tick of its
   * deadline (DESIGN's bound). With whole-tick slots the rounding alone used the tick up (lateness p99 1,147 ms at a
   * 1 s tick in {@code bench ackwheel}).
   */
  static final int SLOTS_PER_TICK = 4;

  private WheelRules() {}

  /** The slot width for {@code config}: a {@value #SLOTS_PER_TICK}th of the tick, at least 1 ms. */
  static long slotMs(AckTimeoutConfig config) {
    return Math.max(1, config.tick().toMillis() / SLOTS_PER_TICK);
  }

  /** The first slot boundary at or after {@code deadline}: a timer never fires early. */
  static long slotOf(long deadline, long slotMs) {
    return Math.floorDiv(deadline + slotMs - 1, slotMs);
  }

  /**
   * The first seq an ACK of {@code seq} clears on its device, or empty for none: it starts after the device's
   * previous ACK ({@code previousSeq}, null if none), since nothing at or below that is pending (that ACK removed
   * it, and a delivery of such a seq is ignored); starting lower made every ACK step over the RocksDB tombstones of
   * all the device's earlier ACKed seqs. A repeated or older ACK clears nothing.
   */
  static OptionalLong ackClearsFrom(Long previousSeq, long seq) {
    if (previousSeq == null) {
      return OptionalLong.of(Long.MIN_VALUE);
    }
    if (previousSeq == Long.MAX_VALUE || seq <= previousSeq) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(previousSeq + 1);
  }

  /**
   * What a due timer comes to.
   *
   * @param rearm the timer's next state in the wheel, or null: it leaves the wheel (and the pending store)
   * @param emit whether a timeout is emitted for it now
   * @param isFinal whether that timeout is the last (no redelivery follows)
   */
  record Expiry(Pending rearm, boolean emit, boolean isFinal) {}

  /**
   * What the timer in slot {@code timerSlot} whose pending state is {@code p} comes to at {@code now}; null when
   * the state is filed under another slot (a redelivery moved it: this wheel entry is stale).
   */
  static Expiry expire(long timerSlot, Pending p, long now, long timeoutMs, int maxAttempts, long slotMs) {
    if (p.slot() != timerSlot) {
      return null;
    }
    if (p.deadline() > now) {
      // Armed by a wheel with wider slots (an earlier build, or a larger IM_ACK_TICK): the slot number read with
      // this wheel's width ends before the deadline. Never early: back in at the slot of its deadline.
      return new Expiry(new Pending(slotOf(p.deadline(), slotMs), p.firstPushedAt(), p.deadline(), p.attempts()),
          false, false);
    }
    if (p.attempts() >= maxAttempts) {
      return new Expiry(null, true, true);
    }
    // Ask for a redelivery and give the next attempt a full timeout of its own.
    long deadline = now + timeoutMs;
    return new Expiry(new Pending(slotOf(deadline, slotMs), p.firstPushedAt(), deadline, p.attempts() + 1), true,
        false);
  }
}
