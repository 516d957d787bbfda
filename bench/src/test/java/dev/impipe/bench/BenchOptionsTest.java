package dev.impipe.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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
        .hasMessageContaining("Unmatched argument at index 0: 'nope'");
    assertThatThrownBy(() -> BenchOptions.parse(new String[0], Map.of())).hasMessageContaining("no scenario given");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"delay", "--scale", "huge"}, Map.of()))
        .hasMessageContaining("--scale");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"delay", "--burst"}, Map.of()))
        .hasMessageContaining("Missing required parameter for option '--burst' (N)");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"delay", "--brust", "5k"}, Map.of()))
        .as("a misspelt setting is an error, not silently ignored")
        .hasMessageContaining("Unknown options: '--brust', '5k'");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"scale", "--users", "5k"}, Map.of()))
        .as("a setting of another scenario").hasMessageContaining("Unknown options: '--users', '5k'");
  }

  @Test
  void everyScenarioSettingIsDeclaredAndNamedInItsHelp() {
    for (String scenario : BenchOptions.SCENARIOS) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int status = BenchMain.run(new String[] {scenario, "--help"}, Map.of(),
          new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
      assertThat(status).isZero();
      String help = out.toString(StandardCharsets.UTF_8);
      assertThat(help).startsWith("Usage: bin/im bench " + scenario).contains("--scale=small|default|FACTOR",
          "--bootstrap=HOST:PORT", "--registry=URL", "--out=DIR", "--ceiling-records=N");
      for (BenchOptions.Setting setting : BenchOptions.SCENARIO_SPECS.get(scenario).settings()) {
        assertThat(help).contains("--" + setting.name() + "=" + setting.label());
      }
    }
  }

  @Test
  void aPercentSignInAHelpTextIsPrintedAsWritten() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    BenchMain.run(new String[] {"push", "--help"}, Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("5%").doesNotContain("%%", "%n");
    assertThat(BenchOptions.literal("5% of 10%")).isEqualTo("5%% of 10%%");
  }

  @Test
  void mainReportsUsageErrorsWithStatus2AndListsTheScenarios() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
    assertThat(BenchMain.run(new String[] {"--help"}, Map.of(), o, e)).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("fanout", "sync", "ackwheel", "delay", "scale", "push",
        "jmh");
    assertThat(BenchMain.run(new String[0], Map.of(), o, e)).isEqualTo(2);
    assertThat(BenchMain.run(new String[] {"fanout", "--nope"}, Map.of(), o, e)).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("im bench: Unknown option: '--nope'",
        "Usage: bin/im bench fanout");
    assertThat(BenchMain.run(new String[] {"delay", "--scale", "huge"}, Map.of(), o, e)).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("im bench: --scale must be small, default or a factor");
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
