package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.InvalidConfigException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The gateway's settings from the environment: documented defaults, bounds checked. */
class PushConfigTest {

  @Test
  void defaults() {
    PushConfig config = PushConfig.fromEnv(Map.of());
    assertThat(config.writeBudget()).isEqualTo(1024 * 1024);
    assertThat(config.limits()).isEqualTo(new FrameLimiter.Limits(64 * 1024, 1_000, 16));
    assertThat(config.maxSocketsPerUser()).isEqualTo(10);
    assertThat(config.page()).isEqualTo(200);
    assertThat(config.read()).isEqualTo(PushConfig.ReadMode.ALL);
  }

  @Test
  void theReadModeIsAllOrOwned() {
    assertThat(PushConfig.fromEnv(Map.of("IM_PUSH_READ", "owned")).read()).isEqualTo(PushConfig.ReadMode.OWNED);
    assertThat(PushConfig.fromEnv(Map.of("IM_PUSH_READ", " All ")).read()).isEqualTo(PushConfig.ReadMode.ALL);
    assertThatThrownBy(() -> PushConfig.fromEnv(Map.of("IM_PUSH_READ", "mine")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_PUSH_READ");
  }

  @Test
  void readsEveryBound() {
    PushConfig config = PushConfig.fromEnv(Map.of("IM_PUSH_SOCKET_WRITE_BUDGET", "65536",
        "IM_PUSH_MAX_FRAME_BYTES", "2048", "IM_PUSH_FRAME_RATE", "5", "IM_PUSH_MAX_INFLIGHT_SENDS", "2",
        "IM_PUSH_MAX_SOCKETS_PER_USER", "3", "IM_PUSH_QUEUE", "50"));
    assertThat(config.writeBudget()).isEqualTo(65_536);
    assertThat(config.limits()).isEqualTo(new FrameLimiter.Limits(2_048, 5, 2));
    assertThat(config.maxSocketsPerUser()).isEqualTo(3);
    assertThat(config.page()).isEqualTo(50);
  }

  @Test
  void ownedFallsBackToAllWithoutTheInboxStoreInTheProcess() {
    PushConfig owned = PushConfig.fromEnv(Map.of("IM_PUSH_READ", "owned"));
    assertThat(PushGatewayComponent.effective(owned, true).read()).isEqualTo(PushConfig.ReadMode.OWNED);
    assertThat(PushGatewayComponent.effective(owned, false).read()).isEqualTo(PushConfig.ReadMode.ALL);
    PushConfig all = PushConfig.fromEnv(Map.of());
    assertThat(PushGatewayComponent.effective(all, true)).isEqualTo(all);
  }

  @Test
  void aBudgetBelowTheMinimumIsRefusedByName() {
    assertThatThrownBy(() -> PushConfig.fromEnv(Map.of("IM_PUSH_SOCKET_WRITE_BUDGET", "100")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_PUSH_SOCKET_WRITE_BUDGET");
  }
}
