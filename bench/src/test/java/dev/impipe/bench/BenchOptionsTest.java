package dev.impipe.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {

  @Test
  void parsesScaleBrokerAndSettings() {
    BenchOptions o = BenchOptions.parse(new String[] {"fanout", "--scale", "small", "--bootstrap", "h:1",
        "--registry=http://r", "--messages", "20k", "--duration", "5"}, Map.of());
    assertThat(o.scale()).isEqualTo(BenchOptions.SMALL);
    assertThat(o.bootstrap()).contains("h:1");
    assertThat(o.registry()).contains("http://r");
    assertThat(o.count("messages", 200_000, 1)).isEqualTo(20_000);
    assertThat(o.count("users", 50_000, 1_000)).isEqualTo(2_500);
    assertThat(o.count("groups", 100, 1_000)).isEqualTo(1_000);
    assertThat(o.fixed("duration", 30)).isEqualTo(5);
  }

  @Test
  void countsTakeSuffixesAndEnvironmentSuppliesTheBroker() {
    BenchOptions o = BenchOptions.parse(new String[] {"scale", "--timers", "10m", "--scale", "2"},
        Map.of("KAFKA_BOOTSTRAP_SERVERS", "k:9"));
    assertThat(o.count("timers", 1, 1)).isEqualTo(10_000_000);
    assertThat(o.count("schedules", 1_000_000, 1)).isEqualTo(2_000_000);
    assertThat(o.bootstrap()).contains("k:9");
  }

  @Test
  void rejectsNonsense() {
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"nope"}, Map.of()))
        .hasMessageContaining("unknown scenario");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"delay", "--scale", "huge"}, Map.of()))
        .hasMessageContaining("--scale");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"delay", "--burst"}, Map.of()))
        .hasMessageContaining("needs a value");
  }

  @Test
  void parsesProducerPerformanceSummary() {
    Ceiling.Summary s = Ceiling.parse("500000 records sent, 146156.094709 records/sec (20.35 MB/sec), 734.63 ms avg "
        + "latency, 961.00 ms max latency, 751 ms 50th, 906 ms 95th, 929 ms 99th, 952 ms 99.9th.");
    assertThat(s.records()).isEqualTo(500_000);
    assertThat(s.recordsPerSec()).isEqualTo(146156.094709);
    assertThat(s.p99LatencyMs()).isEqualTo(929);
    assertThat(Ceiling.parse("96746 records sent, 792.7 records/sec (0.11 MB/sec), 932.6 ms avg latency, 1.0 ms max"
        + " latency.").p99LatencyMs()).isEqualTo(-1);
  }
}
