package dev.impipe.notify.decide;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class InputHorizonTest {

  @Test
  void rightAfterTheStartNothingIsDecidedUntilRecordsOrIdleTimeSaySo() {
    InputHorizon h = new InputHorizon(1_000, 10_000);
    assertThat(h.at(10_500)).isEqualTo(Long.MIN_VALUE);
    assertThat(h.at(10_999)).isEqualTo(Long.MIN_VALUE);
    assertThat(h.at(11_000)).isEqualTo(11_000);
  }

  @Test
  void whileRecordsArriveTheNewestRecordTimeReadIsTheHorizon() {
    InputHorizon h = new InputHorizon(1_000, 0);
    h.read(20_000, 5_000);
    h.read(20_500, 4_000);
    assertThat(h.at(20_900)).isEqualTo(5_000);
    // never beyond the wall clock, whatever a producer's clock says
    h.read(21_000, 90_000);
    assertThat(h.at(21_100)).isEqualTo(21_100);
    // once nothing has come for the idle time, the wall clock
    assertThat(h.at(22_000)).isEqualTo(22_000);
  }

  @Test
  void theIdleTimeIsASecondOrHalfOfIMNotifyAfter() {
    assertThat(InputHorizon.idleMs(10_000)).isEqualTo(1_000);
    assertThat(InputHorizon.idleMs(1_000)).isEqualTo(500);
    assertThat(InputHorizon.idleMs(1)).isEqualTo(1);
  }
}
