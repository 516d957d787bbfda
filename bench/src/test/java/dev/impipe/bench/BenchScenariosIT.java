package dev.impipe.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.runtime.testing.ItEnvironment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every scenario at {@code --scale small} against the shared test broker and registry, so the harness cannot rot:
 * it must finish, write its three files, and report the figures the README table is built from. Performance
 * targets are not asserted (this is not a benchmark run).
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class BenchScenariosIT {

  @TempDir
  Path out;

  @ParameterizedTest
  @ValueSource(strings = {"fanout", "ackwheel", "delay", "scale", "sync"})
  void scenarioRunsAtSmallScaleAndWritesItsResults(String scenario) throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    Path json;
    try (PrintStream ps = new PrintStream(log, true, StandardCharsets.UTF_8)) {
      BenchOptions options = BenchOptions.parse(new String[] {scenario, "--scale", "small", "--bootstrap",
          env.bootstrapServers(), "--registry", env.schemaRegistryUrl(), "--out", out.toString(),
          "--ceiling-records", "20k", "--duration", "5"}, Map.of());
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
  }
}
