package dev.impipe.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.testkit.ItEnvironment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every scenario at {@code --scale small} against the shared test broker and registry, so the harness cannot rot:
 * it must finish, write its three files, and report the figures docs/performance.md is built from. Performance
 * targets are not asserted (this is not a benchmark run), but the correctness figures a scenario computes are: a
 * record delivered early, a timeout for an ACKed seq or a failed sync request fails the build.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class BenchScenariosIT {

  private static final String ACKED_TIMEOUTS = "timeouts for ACKed seqs (must be 0)";
  private static final long WHEEL_TIMEOUT_MS = 20_000;
  /** ACKs come at most 80% of the timeout after their delivery: the wheel may fall this far behind. */
  private static final long ACK_MARGIN_MS = WHEEL_TIMEOUT_MS / 5;

  /** Per scenario, the figures that state a rule (not a performance target): each must be present and met. */
  private static final Map<String, List<String>> CORRECTNESS = Map.of(
      "ackwheel", List.of("timeouts received", ACKED_TIMEOUTS),
      "delay", List.of("records delivered", "delivered early (must be 0)"),
      "scale", List.of("pending ACK timers held", "scheduled records held"),
      "sync", List.of("sync: failed requests (non-200)"));

  /**
   * Settings that keep a rule's figure about the rule and not about this machine's load: with a 20 s wheel
   * timeout an ACK has 4 s of margin, so a loaded runner whose wheel reads its input a little late does not turn
   * an ACKed seq into a timeout. Everything else is below {@code --scale small}: the harness is what is tested, not
   * the figures, and the build runs this beside the cluster fault test on two cores, where every record and every
   * idle second here slows that one down too. Each count still takes every code path (a second warm-up round, a
   * burst after a spread, timers and schedules both held, sync pages over many users).
   */
  private static final Map<String, List<String>> EXTRA_ARGS = Map.of(
      "ackwheel", List.of("--timeout", WHEEL_TIMEOUT_MS + "ms", "--duration", "3"),
      // Due 5 s after the first schedule (10 s by default) over a 2 s window: the burst is due 12 s in, not 20 s.
      "delay", List.of("--spread", "1k", "--burst", "2k", "--lead", "5", "--window", "2"),
      "scale", List.of("--timers", "3k", "--schedules", "3k"),
      // The latency legs' watchers and the load generator's own JVM too: the default path runs in every bench run.
      // Two warm-up rounds, not up to eight: at this size the JIT never goes quiet, and the warm-up loop is
      // exercised by the second round as well as by the eighth.
      "fanout", List.of("--messages", "1k", "--users", "500", "--groups", "50", "--duration", "3", "--stages", "1",
          "--load-jvm", "1", "--settle", "1", "--warmup", "1k", "--warmup-rounds", "2"),
      "sync", List.of("--messages", "500", "--users", "100", "--groups", "20", "--duration", "2"),
      "notify", List.of("--devices", "200", "--backlog", "300", "--duration", "2", "--cost", "0"));

  @TempDir
  Path out;

  @ParameterizedTest
  @ValueSource(strings = {"fanout", "ackwheel", "delay", "scale", "sync", "notify"})
  void scenarioRunsAtSmallScaleAndWritesItsResults(String scenario) throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    Path json;
    try (PrintStream ps = new PrintStream(log, true, StandardCharsets.UTF_8)) {
      List<String> args = new ArrayList<>(List.of(scenario, "--scale", "small", "--bootstrap",
          env.bootstrapServers(), "--registry", env.schemaRegistryUrl(), "--out", out.toString(),
          "--ceiling-records", "1k"));
      args.addAll(EXTRA_ARGS.getOrDefault(scenario, List.of()));
      BenchOptions options = BenchOptions.parse(args.toArray(String[]::new), Map.of());
      json = BenchMain.runScenario(options, ps);
    } finally {
      System.out.print(log.toString(StandardCharsets.UTF_8));
    }

    JsonNode root = new ObjectMapper().readTree(json.toFile());
    assertThat(root.get("scenario").asText()).isEqualTo(scenario);
    assertThat(root.get("ceiling").get("recordsPerSec").asDouble()).isPositive();
    assertThat(root.get("figures").size()).isGreaterThan(3);
    String base = json.getFileName().toString().replace(".json", "");
    assertThat(Files.readString(out.resolve(base + ".md"))).contains("## Figures");
    assertThat(Files.readString(out.resolve(base + ".svg"))).startsWith("<svg");
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("[bench " + scenario + "]");

    // The rules the scenario checked while it ran: met, with the value its target names.
    Map<String, JsonNode> figures = new java.util.HashMap<>();
    root.get("figures").forEach(f -> figures.put(f.get("name").asText(), f));
    for (String name : CORRECTNESS.getOrDefault(scenario, List.of())) {
      JsonNode f = figures.get(name);
      assertThat(f).as("figure '%s' of %s", name, scenario).isNotNull();
      double behind = figures.get("lateness max (emitted)") == null ? 0
          : figures.get("lateness max (emitted)").get("value").asDouble();
      if (name.equals(ACKED_TIMEOUTS) && behind > ACK_MARGIN_MS) {
        // The wheel fires on the wall clock: when it fell further behind than an ACK's margin (the machine was
        // overloaded), an ACK may legitimately be read after its deadline. Said, not asserted.
        System.out.printf("[BenchScenariosIT] wheel %.0f ms behind (> %d ms margin): %s = %s not checked%n",
            behind, ACK_MARGIN_MS, name, f.get("value"));
        continue;
      }
      assertThat(f.get("met").asBoolean()).as("%s: %s = %s, target %s", scenario, name, f.get("value"),
          f.get("target")).isTrue();
      if (f.get("target").asText().equals("0")) {
        assertThat(f.get("value").asDouble()).as("%s: %s", scenario, name).isZero();
      }
    }
  }
}
