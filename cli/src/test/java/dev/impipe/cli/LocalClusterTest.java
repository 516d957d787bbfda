package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.InvalidConfigException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LocalClusterTest {

  @Test
  void brokerAndInstanceCountsAreSmallNumbers() {
    assertThat(LocalCommand.count("--brokers", "3")).isEqualTo(3);
    assertThat(LocalCommand.count("--instances", "1")).isEqualTo(1);
    assertThat(LocalCommand.count("--instances", "9")).isEqualTo(9);
    assertThatThrownBy(() -> LocalCommand.count("--brokers", "0")).isInstanceOf(CliException.class)
        .hasMessageContaining("--brokers takes a number from 1 to 9, not '0'");
    assertThatThrownBy(() -> LocalCommand.count("--instances", "10")).isInstanceOf(CliException.class);
    assertThatThrownBy(() -> LocalCommand.count("--instances", "two")).isInstanceOf(CliException.class);
  }

  @Test
  void severalInstancesKeepAStandbyOfEveryStateByDefault() {
    assertThat(LocalCluster.standbyDefault(Map.of(), 1)).isZero();
    assertThat(LocalCluster.standbyDefault(Map.of(), 2)).isEqualTo(1);
    assertThat(LocalCluster.standbyDefault(Map.of("IM_STANDBY_REPLICAS", "0"), 3)).isZero();
    assertThatThrownBy(() -> LocalCluster.standbyDefault(Map.of("IM_STANDBY_REPLICAS", "-1"), 2))
        .isInstanceOf(InvalidConfigException.class);
  }

  @Test
  void brokersOfItsOwnAndAGivenBootstrapDoNotMix() {
    assertThat(CliRun.of(Map.of("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"), "local", "--brokers", "3")
        .usageError()).contains("im local: --brokers starts brokers of its own: unset KAFKA_BOOTSTRAP_SERVERS");
    assertThat(CliRun.of(Map.of("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092", "SCHEMA_REGISTRY_URL", "http://x:1"),
        "run", "--brokers", "3").usageError()).contains("im run: Unknown options: '--brokers', '3'")
        .contains("Usage: bin/im run");
  }
}
