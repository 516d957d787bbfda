package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.InvalidConfigException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DelayConfigTest {

  @Test
  void theDefaultTargetIsTheMessagesTopicUnderTheConfiguredPrefix() {
    assertThat(DelayConfig.fromEnv(Map.of("IM_TOPIC_PREFIX", "staging.")).targets())
        .containsExactly("staging.messages");
    assertThat(DelayConfig.fromEnv(Map.of("IM_TOPIC_PREFIX", "staging.", "IM_DELAY_TARGETS", "*")).targets())
        .containsExactly("*");
  }

  @Test
  void defaultsMatchTheSeed() {
    DelayConfig config = DelayConfig.fromEnv(Map.of());

    assertThat(config.tickMs()).isEqualTo(1_000);
    assertThat(config.maxDelayMs()).isEqualTo(Duration.ofDays(730).toMillis());
    assertThat(config.batch()).isEqualTo(5_000);
    assertThat(config.drainTickMs()).isEqualTo(20);
    assertThat(config.targets()).containsExactly("im.messages");
    assertThat(config.streamsOverrides()).containsEntry("poll.ms", 20L).containsEntry("num.stream.threads", 2);
  }

  @Test
  void readsEveryVariable() {
    DelayConfig config = DelayConfig.fromEnv(Map.of(
        "IM_DELAY_TICK", "500ms", "IM_DELAY_MAX", "365d", "IM_DELAY_BATCH", "200", "IM_DELAY_DRAIN_TICK", "5ms",
        "IM_DELAY_TARGETS", "im.messages, im.inbox,app.*", "IM_DELAY_TOPIC_CACHE", "10s", "IM_DELAY_THREADS", "3",
        "IM_DELAY_SEGMENT", "10m", "IM_DELAY_SWEEP_TIME", "250ms"));

    assertThat(config).isEqualTo(new DelayConfig(500, Duration.ofDays(365).toMillis(), 200, 5,
        List.of("im.messages", "im.inbox", "app.*"), 10_000, 3, 600_000, 250));
    assertThat(config.changelogRetentionMs()).isEqualTo(Duration.ofDays(395).toMillis());
  }

  @Test
  void errorsNameTheVariable() {
    assertThatThrownBy(() -> DelayConfig.fromEnv(Map.of("IM_DELAY_BATCH", "0")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_DELAY_BATCH");
    assertThatThrownBy(() -> DelayConfig.fromEnv(Map.of("IM_DELAY_TICK", "soon")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_DELAY_TICK");
    assertThatThrownBy(() -> DelayConfig.fromEnv(Map.of("IM_DELAY_TICK", "1s", "IM_DELAY_DRAIN_TICK", "2s")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_DELAY_DRAIN_TICK");
    assertThatThrownBy(() -> DelayConfig.fromEnv(Map.of("IM_DELAY_TARGETS", "im.*.x")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_DELAY_TARGETS");
    assertThatThrownBy(() -> DelayConfig.fromEnv(Map.of("IM_DELAY_SEGMENT", "1s")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_DELAY_SEGMENT");
  }

  @Test
  void aShortTickShortensTheDefaultDrainTick() {
    assertThat(DelayConfig.fromEnv(Map.of("IM_DELAY_TICK", "10ms")).drainTickMs()).isEqualTo(10);
  }

  @Test
  void targetsAreTrimmedAndEmptyEntriesDropped() {
    assertThat(DelayConfig.fromEnv(Map.of("IM_DELAY_TARGETS", " im.messages, ,app.*,")).targets())
        .containsExactly("im.messages", "app.*");
  }

  @Test
  void targetsWithCharactersNoTopicNameHasOrAStarThatDoesNotEndAPrefixAreRefused() {
    assertThatThrownBy(() -> DelayConfig.fromEnv(Map.of("IM_DELAY_TARGETS", "im.messages;im.inbox")))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("IM_DELAY_TARGETS='im.messages;im.inbox' is invalid");
    assertThatThrownBy(() -> DelayConfig.fromEnv(Map.of("IM_DELAY_TARGETS", "*im")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("'*' may only end a prefix");
  }
}
