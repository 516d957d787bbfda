package dev.impipe.ack.wheel;

import dev.impipe.ack.AckTimeoutConfig;

/**
 * Where a deadline lands in the wheel, without stores ({@link DeviceTimers} applies the rest per device).
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
}
