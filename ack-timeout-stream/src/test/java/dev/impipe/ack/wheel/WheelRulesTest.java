package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.AckTimeoutConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where a deadline lands. */
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
}
