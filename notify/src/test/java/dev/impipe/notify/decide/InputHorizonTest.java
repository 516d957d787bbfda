package dev.impipe.notify.decide;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class InputHorizonTest {

  @Test
  void rightAfterTheStartNothingIsDecidedUntilRecordsOrIdleTimeSaySo() {
    InputHorizon h = new InputHorizon(1_000, 10_000);
    h.backlogFetched("0_0", 0);
    assertThat(h.at(10_500)).isEqualTo(Long.MIN_VALUE);
    assertThat(h.at(10_999)).isEqualTo(Long.MIN_VALUE);
    assertThat(h.at(11_000)).isEqualTo(11_000);
  }

  @Test
  void whileRecordsArriveTheNewestRecordTimeReadIsTheHorizon() {
    InputHorizon h = new InputHorizon(1_000, 0);
    h.backlogFetched("0_0", 0);
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
  void afterAStartIdleIsNotReadToTheEndUntilTheBacklogIsFetched() {
    InputHorizon h = new InputHorizon(1_000, 10_000);
    // the first fetch is slow: two idle seconds, and still nothing may be decided
    assertThat(h.awaitingBacklog(12_000)).isTrue();
    assertThat(h.at(12_000)).isEqualTo(Long.MIN_VALUE);
    // the backlog comes: its record times, as before
    h.read(12_100, 5_000);
    assertThat(h.at(14_000)).isEqualTo(5_000);
    // fetched to the start's end offsets: from now on idle means read to the end
    h.backlogFetched("0_0", 0);
    assertThat(h.awaitingBacklog(14_000)).isFalse();
    assertThat(h.at(14_000)).isEqualTo(14_000);
  }

  @Test
  void withoutEndOffsetsTheIdleRuleWaitsAMinuteAfterTheStartAtMost() {
    InputHorizon h = new InputHorizon(1_000, 0);
    assertThat(h.at(InputHorizon.BACKLOG_WAIT_MS - 1)).isEqualTo(Long.MIN_VALUE);
    assertThat(h.awaitingBacklog(InputHorizon.BACKLOG_WAIT_MS)).isFalse();
    assertThat(h.at(InputHorizon.BACKLOG_WAIT_MS)).isEqualTo(InputHorizon.BACKLOG_WAIT_MS);
  }

  @Test
  void theIdleTimeIsASecondOrHalfOfIMNotifyAfter() {
    assertThat(InputHorizon.idleMs(10_000)).isEqualTo(1_000);
    assertThat(InputHorizon.idleMs(1_000)).isEqualTo(500);
    assertThat(InputHorizon.idleMs(1)).isEqualTo(1);
  }
}
