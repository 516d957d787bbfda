package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.ack.wheel.WheelCodec.Pending;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Slots, what an ACK clears, and what a due timer comes to. */
class WheelRulesTest {

  @Test
  void aDeadlineLandsInTheFirstSlotEndingAtOrAfterIt() {
    assertThat(WheelRules.slotOf(1_000, 250)).isEqualTo(4);
    assertThat(WheelRules.slotOf(1_001, 250)).isEqualTo(5);
    assertThat(WheelRules.slotOf(-1, 250)).isZero();
  }

  @Test
  void aSlotIsAQuarterTick() {
    assertThat(WheelRules.slotMs(AckTimeoutConfig.fromEnv(Map.of("IM_ACK_TICK", "1s")))).isEqualTo(250);
    assertThat(WheelRules.slotMs(AckTimeoutConfig.fromEnv(Map.of("IM_ACK_TICK", "10ms")))).isEqualTo(2);
  }

  @Test
  void anAckClearsFromAfterTheDevicesPreviousAckAndARepeatedOrOlderOneNothing() {
    assertThat(WheelRules.ackClearsFrom(null, 5)).isEqualTo(OptionalLong.of(Long.MIN_VALUE));
    assertThat(WheelRules.ackClearsFrom(3L, 5)).isEqualTo(OptionalLong.of(4));
    assertThat(WheelRules.ackClearsFrom(5L, 5)).isEmpty();
    assertThat(WheelRules.ackClearsFrom(6L, 5)).isEmpty();
    assertThat(WheelRules.ackClearsFrom(Long.MAX_VALUE, Long.MAX_VALUE)).isEmpty();
  }

  @Test
  void aStaleEntryComesToNothingAndAnEarlyOneGoesBackInAtItsDeadlinesSlot() {
    Pending p = new Pending(4, 100, 1_000, 1);
    assertThat(WheelRules.expire(3, p, 2_000, 500, 3, 250)).isNull();

    WheelRules.Expiry early = WheelRules.expire(4, new Pending(4, 100, 1_001, 1), 1_000, 500, 3, 250);
    assertThat(early).isEqualTo(new WheelRules.Expiry(new Pending(5, 100, 1_001, 1), false, false));
  }

  @Test
  void aDueTimerAsksForARedeliveryWithAFullTimeoutUntilTheLastAttempt() {
    WheelRules.Expiry retry = WheelRules.expire(4, new Pending(4, 100, 1_000, 2), 1_000, 500, 3, 250);
    assertThat(retry).isEqualTo(new WheelRules.Expiry(new Pending(6, 100, 1_500, 3), true, false));

    WheelRules.Expiry last = WheelRules.expire(4, new Pending(4, 100, 1_000, 3), 1_000, 500, 3, 250);
    assertThat(last).isEqualTo(new WheelRules.Expiry(null, true, true));
  }
}
