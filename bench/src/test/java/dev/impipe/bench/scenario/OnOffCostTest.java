package dev.impipe.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OnOffCostTest {

  @Test
  void theOrderTurnsEachRoundSoEachStateIsAsOftenFirstAsSecond() {
    assertThat(OnOffCost.order(2, false)).containsExactly(true, false, false, true);
    assertThat(OnOffCost.order(2, true)).containsExactly(false, true, true, false);
    assertThat(OnOffCost.order(3, false)).containsExactly(true, false, false, true, true, false);
    assertThat(OnOffCost.order(1, false)).containsExactly(true, false);
  }
}
