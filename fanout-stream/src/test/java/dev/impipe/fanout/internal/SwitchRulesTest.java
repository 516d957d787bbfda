package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.topics.GenerationControl.Phase;
import dev.impipe.runtime.topics.GenerationControl.Switch;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SwitchRulesTest {

  @Test
  void withoutASwitchEntriesGoToTheConfiguredGeneration() {
    assertThat(SwitchRules.decide(0, Optional.empty(), 0)).isEqualTo(new SwitchRules.Decision(0, 0, false));
    assertThat(SwitchRules.decide(2, Optional.empty(), 0)).isEqualTo(new SwitchRules.Decision(0, 2, false));
  }

  @Test
  void aFenceRequestFencesOnceThenHolds() {
    // Given a switch 0 -> 1 asked for; When the task has not fenced yet: fence 0 for target 1 and hold
    assertThat(SwitchRules.decide(0, Optional.of(new Switch(1, Phase.FENCE)), 0))
        .isEqualTo(new SwitchRules.Decision(1, 0, true));
    // When it has: no second fence, still hold
    assertThat(SwitchRules.decide(0, Optional.of(new Switch(1, Phase.FENCE)), 1))
        .isEqualTo(new SwitchRules.Decision(0, 0, true));
  }

  @Test
  void aFencedTaskHoldsEvenWhenItsViewOfTheControlTopicIsBehind() {
    // Given a task restarted after fencing, whose watch has not read the control topic yet
    assertThat(SwitchRules.decide(0, Optional.empty(), 1)).isEqualTo(new SwitchRules.Decision(0, 0, true));
  }

  @Test
  void liveReleasesToTheNewGeneration() {
    assertThat(SwitchRules.decide(0, Optional.of(new Switch(1, Phase.LIVE)), 1))
        .isEqualTo(new SwitchRules.Decision(0, 1, false));
    // A fan-out later restarted with the new generation configured: nothing to fence, writes to it
    assertThat(SwitchRules.decide(1, Optional.of(new Switch(1, Phase.LIVE)), 0))
        .isEqualTo(new SwitchRules.Decision(0, 1, false));
  }

  @Test
  void aFanoutStartedWithTheTargetGenerationDuringTheSwitchFencesAndHoldsToo() {
    // Given a fan-out started with generation 1 configured while the control topic says "fence for 1"
    assertThat(SwitchRules.decide(1, Optional.of(new Switch(1, Phase.FENCE)), 0))
        .isEqualTo(new SwitchRules.Decision(1, 1, true));
    // And with its task fenced already by the previous owner
    assertThat(SwitchRules.decide(1, Optional.of(new Switch(1, Phase.FENCE)), 1))
        .isEqualTo(new SwitchRules.Decision(0, 1, true));
  }

  @Test
  void aDeploymentStartedAtAGenerationWithoutASwitchWritesToIt() {
    assertThat(SwitchRules.decide(1, Optional.empty(), 0)).isEqualTo(new SwitchRules.Decision(0, 1, false));
  }

  @Test
  void theNextSwitchFencesTheLiveGeneration() {
    assertThat(SwitchRules.decide(1, Optional.of(new Switch(2, Phase.FENCE)), 1))
        .isEqualTo(new SwitchRules.Decision(2, 1, true));
    assertThat(SwitchRules.decide(1, Optional.of(new Switch(2, Phase.LIVE)), 2))
        .isEqualTo(new SwitchRules.Decision(0, 2, false));
  }
}
