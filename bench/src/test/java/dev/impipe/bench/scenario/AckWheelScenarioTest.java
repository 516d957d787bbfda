package dev.impipe.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.bench.BenchOptions;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AckWheelScenarioTest {

  private static BenchOptions options(String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "ackwheel";
    System.arraycopy(args, 0, all, 1, args.length);
    return BenchOptions.parse(all, Map.of());
  }

  @Test
  void warmUpDefaultsFollowTheRateAndScale() {
    BenchOptions max = options("--rate", "max");
    assertThat(AckWheelScenario.maxRate(max)).isTrue();
    assertThat(AckWheelScenario.Warmup.of(max, true)).isEqualTo(new AckWheelScenario.Warmup(8, 5));
    BenchOptions fixed = options();
    assertThat(AckWheelScenario.maxRate(fixed)).isFalse();
    assertThat(AckWheelScenario.Warmup.of(fixed, false)).isEqualTo(new AckWheelScenario.Warmup(8, 10));
    assertThat(AckWheelScenario.Warmup.of(options("--scale", "small"), false))
        .isEqualTo(new AckWheelScenario.Warmup(1, 2));
  }

  @Test
  void warmUpSettingsAreTakenAsGivenAndZeroRoundsMeansNone() {
    assertThat(AckWheelScenario.Warmup.of(options("--warmup-rounds", "3", "--warmup-seconds", "4"), false))
        .isEqualTo(new AckWheelScenario.Warmup(3, 4));
    assertThat(AckWheelScenario.Warmup.of(options("--warmup-rounds", "0", "--warmup-seconds", "0"), true))
        .isEqualTo(new AckWheelScenario.Warmup(0, 0));
  }

  @Test
  void rejectsRoundsWithoutLoad() {
    assertThatThrownBy(() -> AckWheelScenario.Warmup.of(options("--warmup-seconds", "0"), false))
        .hasMessageContaining("--warmup-seconds");
    assertThatThrownBy(() -> AckWheelScenario.Warmup.of(options("--warmup-rounds", "many"), false))
        .hasMessageContaining("--warmup-rounds");
  }

  @Test
  void durationsTakeUnits() {
    BenchOptions o = options("--tick", "250ms", "--timeout", "2.5s");
    assertThat(AckWheelScenario.durationMs(o, "tick", 1)).isEqualTo(250);
    assertThat(AckWheelScenario.durationMs(o, "timeout", 1)).isEqualTo(2_500);
    assertThat(AckWheelScenario.durationMs(options(), "tick", 1_000)).isEqualTo(1_000);
  }
}
