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
}
