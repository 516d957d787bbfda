package dev.impipe.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * deploy/monitoring: the alert rules and the dashboard query only metrics that docs/reference/metrics.md lists (the
 * document a test of cli holds to what /metrics serves), and the rules pass {@code promtool check rules} and their
 * own {@code promtool test rules} where promtool is installed.
 */
class MonitoringTest {

  private static final Path MONITORING = Path.of("monitoring");
  private static final Path RULES = MONITORING.resolve("prometheus-rules.yaml");
  private static final Path RULE_TESTS = MONITORING.resolve("prometheus-rules.test.yaml");
  private static final Path DASHBOARD = MONITORING.resolve("grafana-dashboard.json");
  private static final Path METRICS_DOC = Path.of("..", "docs", "reference", "metrics.md");

  /** A pipeline or Kafka metric name in a PromQL expression. */
  private static final Pattern METRIC = Pattern.compile("\\b((?:im|kafka)_[a-z0-9_]+)");
  /** A metric name given as a regular expression. */
  private static final Pattern NAME_REGEX = Pattern.compile("__name__=~\"([^\"]+)\"");

  @Test
  void theDashboardIsValidJsonAndQueriesOnlyDocumentedMetrics() throws IOException {
    JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
    assertThat(dashboard.path("title").asText()).isNotBlank();
    List<String> exprs = new ArrayList<>();
    for (JsonNode panel : dashboard.path("panels")) {
      if (panel.path("type").asText().equals("row")) {
        continue;
      }
      assertThat(panel.path("targets")).as("panel %s", panel.path("title")).isNotEmpty();
      panel.path("targets").forEach(t -> exprs.add(t.path("expr").asText()));
    }
    assertThat(exprs).hasSizeGreaterThan(10);
    assertOnlyDocumentedMetrics(exprs);
  }

  @Test
  void theAlertRulesQueryOnlyDocumentedMetrics() throws IOException {
    JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(RULES.toFile());
    List<String> exprs = new ArrayList<>();
    Set<String> alerts = new TreeSet<>();
    for (JsonNode group : rules.path("groups")) {
      for (JsonNode rule : group.path("rules")) {
        exprs.add(rule.path("expr").asText());
        if (rule.has("alert")) {
          alerts.add(rule.path("alert").asText());
          assertThat(rule.at("/annotations/summary").asText()).as(rule.path("alert").asText()).isNotBlank();
        }
      }
    }
    // The failure modes the docs describe each have an alert
    assertThat(alerts).contains("ImConsumerLagHigh", "ImRejectedRecords", "ImStreamThreadsDied",
        "ImStreamsAppNotRunning", "ImPushDevicesGoingOffline", "ImSyncUnavailable");
    assertOnlyDocumentedMetrics(exprs);
  }

  @Test
  void promtoolAcceptsTheRulesAndTheirTestsPass() throws Exception {
    Optional<Path> promtool = promtool();
    Assumptions.assumeTrue(promtool.isPresent(), "promtool not installed (Debian: apt-get install prometheus)");

    assertThat(run(promtool.get().toString(), "check", "rules", RULES.getFileName().toString())).contains("SUCCESS");
    assertThat(run(promtool.get().toString(), "test", "rules", RULE_TESTS.getFileName().toString()))
        .contains("SUCCESS");
  }

  private static void assertOnlyDocumentedMetrics(List<String> exprs) throws IOException {
    String doc = Files.readString(METRICS_DOC, StandardCharsets.UTF_8);
    Set<String> documented = new TreeSet<>();
    Matcher d = Pattern.compile("`((?:im|kafka)_[a-z0-9_]+)`").matcher(doc);
    while (d.find()) {
      documented.add(d.group(1));
    }
    Set<String> unknown = new TreeSet<>();
    for (String expr : exprs) {
      Matcher m = METRIC.matcher(expr);
      while (m.find()) {
        String name = m.group(1);
        if (!documented.contains(name) && !documented.contains(name.replaceAll("_(bucket|count|sum)$", ""))) {
          unknown.add(name);
        }
      }
      Matcher r = NAME_REGEX.matcher(expr);
      while (r.find()) {
        Pattern names = Pattern.compile(r.group(1));
        if (documented.stream().noneMatch(n -> names.matcher(n).matches())) {
          unknown.add(r.group(0));
        }
      }
    }
    assertThat(unknown).as("queried but not in docs/reference/metrics.md").isEmpty();
  }

  private static Optional<Path> promtool() {
    String path = System.getenv("PATH");
    for (String dir : path == null ? new String[0] : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir, "promtool");
      if (Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  /** Runs a command in deploy/monitoring; its output, or a failure with it when the exit code is not 0. */
  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).directory(MONITORING.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("%s finished", String.join(" ", command)).isTrue();
    assertThat(p.exitValue()).as("%s:%n%s", String.join(" ", command), out).isZero();
    return out;
  }
}
