package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.InvalidConfigException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fan-out's settings: the documented defaults, and the ranges an operator may set (README configuration). */
class FanoutConfigTest {

  @Test
  void defaultsAreADayOfDedupeAWeekOfRecallAndLargeAboveAThousandMembers() {
    FanoutConfig config = FanoutConfig.defaults();
    assertThat(config.dedupeWindow()).isEqualTo(Duration.ofDays(1));
    assertThat(config.recallWindow()).isEqualTo(Duration.ofDays(7));
    assertThat(config.largeGroupThreshold()).isEqualTo(1_000);
  }

  @Test
  void groupsHoldAtMostAHundredThousandMembersAndASwitchTellsFiveThousandEveryHundredMilliseconds() {
    FanoutConfig config = FanoutConfig.defaults();
    assertThat(config.groupMaxMembers()).isEqualTo(100_000);
    assertThat(config.maxEntriesPerRound()).isEqualTo(5_000);
    assertThat(config.modeSwitchInterval()).isEqualTo(Duration.ofMillis(100));
    FanoutConfig set = FanoutConfig.fromEnv(Map.of(FanoutConfig.IM_GROUP_MAX_MEMBERS, "500",
        FanoutConfig.IM_FANOUT_MAX_ENTRIES_PER_ROUND, "20", FanoutConfig.IM_FANOUT_MODE_SWITCH_INTERVAL, "1s"));
    assertThat(set.groupMaxMembers()).isEqualTo(500);
    assertThat(set.maxEntriesPerRound()).isEqualTo(20);
    assertThat(set.modeSwitchInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThatThrownBy(() -> FanoutConfig.fromEnv(Map.of(FanoutConfig.IM_FANOUT_MAX_ENTRIES_PER_ROUND, "0")))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining(FanoutConfig.IM_FANOUT_MAX_ENTRIES_PER_ROUND);
    assertThatThrownBy(() -> FanoutConfig.fromEnv(Map.of(FanoutConfig.IM_GROUP_MAX_MEMBERS, "0")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining(FanoutConfig.IM_GROUP_MAX_MEMBERS);
  }

  @Test
  void windowsMayBeSetFromAMinuteUpToThirtyDaysOfDedupeAndAYearOfRecall() {
    FanoutConfig widest = FanoutConfig.fromEnv(Map.of(FanoutConfig.IM_FANOUT_DEDUPE_WINDOW, "30d",
        FanoutConfig.IM_FANOUT_RECALL_WINDOW, "365d", FanoutConfig.IM_LARGE_GROUP_THRESHOLD, "10000000"));
    assertThat(widest.dedupeWindow()).isEqualTo(Duration.ofDays(30));
    assertThat(widest.recallWindow()).isEqualTo(Duration.ofDays(365));
    assertThat(widest.largeGroupThreshold()).isEqualTo(10_000_000);
    FanoutConfig narrowest = FanoutConfig.fromEnv(Map.of(FanoutConfig.IM_FANOUT_DEDUPE_WINDOW, "1m",
        FanoutConfig.IM_FANOUT_RECALL_WINDOW, "60s", FanoutConfig.IM_LARGE_GROUP_THRESHOLD, "0"));
    assertThat(narrowest.dedupeWindow()).isEqualTo(Duration.ofMinutes(1));
    assertThat(narrowest.recallWindow()).isEqualTo(Duration.ofMinutes(1));
    assertThat(narrowest.largeGroupThreshold()).isZero();
  }

  @Test
  void windowsOutsideTheirRangeAreRefusedNamingTheSetting() {
    assertThatThrownBy(() -> FanoutConfig.fromEnv(Map.of(FanoutConfig.IM_FANOUT_DEDUPE_WINDOW, "31d")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining(FanoutConfig.IM_FANOUT_DEDUPE_WINDOW);
    assertThatThrownBy(() -> FanoutConfig.fromEnv(Map.of(FanoutConfig.IM_FANOUT_DEDUPE_WINDOW, "59s")))
        .isInstanceOf(InvalidConfigException.class);
    assertThatThrownBy(() -> FanoutConfig.fromEnv(Map.of(FanoutConfig.IM_FANOUT_RECALL_WINDOW, "366d")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining(FanoutConfig.IM_FANOUT_RECALL_WINDOW);
  }
}
