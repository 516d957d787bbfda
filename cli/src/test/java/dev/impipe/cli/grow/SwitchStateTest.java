package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.topics.GenerationControl;
import org.junit.jupiter.api.Test;

class SwitchStateTest {

  @Test
  void countsTheFencesOfItsTargetOnly() {
    SwitchState s = new SwitchState(2);
    s.apply(GenerationControl.SWITCH_KEY, "2 FENCE");
    s.apply(GenerationControl.fenceKey(2, 0), "0");
    s.apply(GenerationControl.fenceKey(1, 1), "1");
    s.apply(GenerationControl.fenceKey(2, 2), "2");

    assertThat(s.missing(3)).containsExactly(1);
    assertThat(s.live()).isFalse();
    assertThat(s.describe(3)).isEqualTo("2 FENCE, fan-out tasks fenced 2/3");
  }

  @Test
  void liveOnceTheSwitchRecordSaysSo() {
    SwitchState s = new SwitchState(1);
    s.apply(GenerationControl.SWITCH_KEY, "1 FENCE");
    s.apply(GenerationControl.SWITCH_KEY, "1 LIVE");
    s.apply("noise", "whatever");

    assertThat(s.live()).isTrue();
    assertThat(s.current().map(GenerationControl.Switch::encode)).contains("1 LIVE");
  }
}
