package dev.impipe.ack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.InvalidConfigException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AckTimeoutConfigTest {

  @Test
  void defaultsAreTheSeeds() {
    AckTimeoutConfig config = AckTimeoutConfig.fromEnv(Map.of());
    assertThat(config.tick()).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.timeout()).isEqualTo(Duration.ofSeconds(15));
    assertThat(config.maxAttempts()).isEqualTo(1);
    assertThat(config.maxEntriesPerPunctuation()).isEqualTo(10_000);
    assertThat(config.catchUpInterval()).isEqualTo(Duration.ofMillis(10));
    assertThat(config.streamThreads()).isEqualTo(1);
  }

  @Test
  void readsEveryVariable() {
    AckTimeoutConfig config = AckTimeoutConfig.fromEnv(Map.of(
        "IM_ACK_TICK", "250ms", "IM_ACK_TIMEOUT", "30s", "IM_ACK_MAX_ATTEMPTS", "3",
        "IM_ACK_MAX_ENTRIES_PER_PUNCTUATION", "500", "IM_ACK_CATCHUP_INTERVAL", "5ms", "IM_ACK_STREAM_THREADS", "2",
        "IM_ACK_ACKED_RETENTION", "5m", "IM_ACK_MAX_PENDING_PER_DEVICE", "100", "IM_ACK_STORE_CACHE", "true"));
    assertThat(config).isEqualTo(new AckTimeoutConfig(Duration.ofMillis(250), Duration.ofSeconds(30), 3, 500,
        Duration.ofMillis(5), 2, Duration.ofSeconds(60), Duration.ofMinutes(5), 100, true));
    assertThat(AckTimeoutConfig.defaults().maxPendingPerDevice()).isEqualTo(5_000);
    assertThat(AckTimeoutConfig.defaults().storeCache()).isFalse();
    assertThat(AckTimeoutConfig.defaults().ackedRetention()).isEqualTo(Duration.ofMinutes(10));
  }

  @Test
  void errorsNameTheVariable() {
    assertThatThrownBy(() -> AckTimeoutConfig.fromEnv(Map.of("IM_ACK_TICK", "soon")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_ACK_TICK");
    assertThatThrownBy(() -> AckTimeoutConfig.fromEnv(Map.of("IM_ACK_MAX_ATTEMPTS", "0")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_ACK_MAX_ATTEMPTS");
    assertThatThrownBy(() -> AckTimeoutConfig.fromEnv(Map.of("IM_ACK_TICK", "20s", "IM_ACK_TIMEOUT", "15s")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_ACK_TIMEOUT");
  }

  @Test
  void theInputCountsAsCaughtUpWithinATickAndAtLeastASecond() {
    assertThat(AckTimeoutConfig.fromEnv(Map.of("IM_ACK_TICK", "250ms")).inputLagToleranceMs()).isEqualTo(1_000);
    assertThat(AckTimeoutConfig.fromEnv(Map.of("IM_ACK_TICK", "2s")).inputLagToleranceMs()).isEqualTo(2_000);
  }

  @Test
  void theInputIsIdleAfterFiveSecondsAtMostHalfTheTimeoutAtLeastTheLagTolerance() {
    assertThat(AckTimeoutConfig.defaults().inputIdleMs()).isEqualTo(5_000);
    assertThat(AckTimeoutConfig.fromEnv(Map.of("IM_ACK_TIMEOUT", "4s")).inputIdleMs()).isEqualTo(2_000);
    assertThat(AckTimeoutConfig.fromEnv(Map.of("IM_ACK_TICK", "100ms", "IM_ACK_TIMEOUT", "1s")).inputIdleMs())
        .isEqualTo(1_000);
  }

  @Test
  void aCopyWithOtherTimingKeepsTheCatchUpIntervalWithinTheTick() {
    AckTimeoutConfig config = AckTimeoutConfig.defaults();

    AckTimeoutConfig fast = config.withTiming(Duration.ofMillis(5), Duration.ofSeconds(1));
    AckTimeoutConfig slow = config.withTiming(Duration.ofSeconds(2), Duration.ofSeconds(30));

    assertThat(fast.tick()).isEqualTo(Duration.ofMillis(5));
    assertThat(fast.timeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(fast.catchUpInterval()).isEqualTo(Duration.ofMillis(5));
    assertThat(slow.catchUpInterval()).isEqualTo(Duration.ofMillis(10));
    assertThat(slow).isEqualTo(new AckTimeoutConfig(Duration.ofSeconds(2), Duration.ofSeconds(30), 1, 10_000,
        Duration.ofMillis(10), 1, config.inputGrace(), config.ackedRetention(), 5_000, false));
  }

  @Test
  void eachCopyChangesItsOwnSettingOnly() {
    AckTimeoutConfig d = AckTimeoutConfig.defaults();

    assertThat(d.withMaxAttempts(4)).isEqualTo(new AckTimeoutConfig(d.tick(), d.timeout(), 4,
        d.maxEntriesPerPunctuation(), d.catchUpInterval(), d.streamThreads(), d.inputGrace(), d.ackedRetention(),
        d.maxPendingPerDevice(), d.storeCache()));
    assertThat(d.withMaxEntriesPerPunctuation(7).maxEntriesPerPunctuation()).isEqualTo(7);
    assertThat(d.withInputGrace(Duration.ofSeconds(3)).inputGrace()).isEqualTo(Duration.ofSeconds(3));
    assertThat(d.withMaxPendingPerDevice(9).maxPendingPerDevice()).isEqualTo(9);
    assertThat(d.withStoreCache(true).storeCache()).isTrue();
    assertThat(d.withStoreCache(false).storeCache()).isFalse();
    assertThat(d.withAckedRetention(Duration.ofMinutes(1)).ackedRetention()).isEqualTo(Duration.ofMinutes(1));
  }
}
