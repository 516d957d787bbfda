package dev.impipe.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.bench.BenchOptions;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PushGatewaysTest {

  @Test
  void gatewaysDefaultToOneAndTakeOneToEight() {
    assertThat(PushGateways.count(BenchOptions.parse(new String[] {"push"}, Map.of()))).isEqualTo(1);
    assertThat(PushGateways.count(BenchOptions.parse(new String[] {"push", "--gateways", "3", "--scale", "small"},
        Map.of()))).isEqualTo(3);
    assertThatThrownBy(() -> PushGateways.count(BenchOptions.parse(new String[] {"push", "--gateways", "0"},
        Map.of()))).hasMessageContaining("--gateways must be between 1 and 8, not 0");
    assertThatThrownBy(() -> PushGateways.count(BenchOptions.parse(new String[] {"push", "--gateways", "9"},
        Map.of()))).hasMessageContaining("--gateways must be between 1 and 8, not 9");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"fanout", "--gateways", "3"}, Map.of()))
        .as("a push setting only").hasMessageContaining("Unknown options: '--gateways', '3'");
  }

  @Test
  void oneInstanceRunsAsTheBenchAlwaysDid() {
    // Given one instance, when its environment is made, then nothing is added to the scenario's
    assertThat(PushGateways.env(0, 1, Map.of("IM_ACK_TIMEOUT", "15s"), "/s/gateway-0", 0))
        .isEqualTo(Map.of("IM_ACK_TIMEOUT", "15s"));
  }

  @Test
  void severalInstancesReadOwnedPartitionsWithStateAndPortsOfTheirOwn() {
    // When the environments of the first and second of three are made
    Map<String, String> first = PushGateways.env(0, 3, Map.of("IM_ACK_TIMEOUT", "15s"), "/s/gateway-0", 0);
    Map<String, String> second = PushGateways.env(1, 3, Map.of("IM_ACK_TIMEOUT", "15s"), "/s/gateway-1", 4711);

    // Then both read owned partitions with their own state; the first keeps IM_HTTP_PORT, the second a free port
    assertThat(first).containsEntry("IM_PUSH_READ", "owned").containsEntry("IM_STATE_DIR", "/s/gateway-0")
        .containsEntry("IM_ACK_TIMEOUT", "15s").doesNotContainKey("IM_HTTP_PORT");
    assertThat(second).containsEntry("IM_PUSH_READ", "owned").containsEntry("IM_STATE_DIR", "/s/gateway-1")
        .containsEntry("IM_HTTP_PORT", "4711");
  }
}
