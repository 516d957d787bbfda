package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class GroupStateTest {

  @Test
  void aGroupIsLargeAboveTheThresholdNotAtIt() {
    assertThat(small(1_000).wantsLarge(1_000)).isFalse();
    assertThat(small(1_001).wantsLarge(1_000)).isTrue();
  }

  @Test
  void aLargeGroupStaysLargeUntilItFallsBelowNinetyPercentOfTheSizeAtWhichItBecameLarge() {
    // became large at 1,001: 90% of that is 900.9
    assertThat(large(901).wantsLarge(1_000)).isTrue();
    assertThat(large(900).wantsLarge(1_000)).isFalse();
  }

  @Test
  void thresholdZeroMeansNeverLarge() {
    assertThat(small(1_000_000).wantsLarge(0)).isFalse();
    assertThat(large(1_000_000).wantsLarge(0)).isFalse();
  }

  @Test
  void theStateRoundTripsThroughItsBytes() {
    GroupState state = new GroupState(7, true, 41, "alice");
    assertThat(GroupState.decode(state.encode())).isEqualTo(state);
  }

  private static GroupState small(long members) {
    return new GroupState(members, false, 0, null);
  }

  private static GroupState large(long members) {
    return new GroupState(members, true, 0, null);
  }
}
