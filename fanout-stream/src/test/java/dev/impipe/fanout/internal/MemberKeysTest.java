package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The membership stores' key and value layouts. */
class MemberKeysTest {

  @Test
  void aMembersKeyNamesItsUserAndFallsInItsGroupsRangeOnly() {
    var key = MemberKeys.key("g1", "alice");

    assertThat(MemberKeys.userId(key)).isEqualTo("alice");
    assertThat(key.compareTo(MemberKeys.groupPrefix("g1"))).isPositive();
    assertThat(key.compareTo(MemberKeys.groupEnd("g1"))).isNegative();
    // "g1" is not a prefix of "g10"'s members
    assertThat(MemberKeys.key("g10", "alice").compareTo(MemberKeys.groupEnd("g1"))).isPositive();
  }

  @Test
  void aMemberValueIsTheClockAtTheJoinAndNothingElse() {
    assertThat(MemberKeys.joinedAt(MemberKeys.joinedAt(42))).isEqualTo(42);

    // A past-members value (two clocks) is not a members value
    assertThatThrownBy(() -> MemberKeys.joinedAt(MemberKeys.period(1, 2))).hasMessageContaining("fanout-members");
  }

  @Test
  void aPastMembershipCoversTheClocksStrictlyBetweenItsJoinAndItsLeave() {
    byte[] period = MemberKeys.period(5, 9);

    assertThat(MemberKeys.covers(period, 5)).isFalse();
    assertThat(MemberKeys.covers(period, 6)).isTrue();
    assertThat(MemberKeys.covers(period, 8)).isTrue();
    assertThat(MemberKeys.covers(period, 9)).isFalse();
  }
}
