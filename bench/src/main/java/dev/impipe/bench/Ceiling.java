package dev.impipe.bench;

import dev.impipe.bench.report.Result;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kafka's own producer benchmark ({@code org.apache.kafka.tools.ProducerPerformance}) against the same broker with
 * the scenario's record size, in a JVM of its own: the practical ceiling every scenario's rate is compared with.
 */
public final class Ceiling {

  private static Summary run(BenchCluster cluster, String suffix, int partitions, int recordSize, long records)
      throws Exception {
    String topic = cluster.createTopic(suffix, partitions);
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
        "-cp", System.getProperty("java.class.path"), "org.apache.kafka.tools.ProducerPerformance",
        "--topic", topic, "--num-records", Long.toString(records), "--record-size", Integer.toString(recordSize),
        "--throughput", "-1", "--producer-props", "bootstrap.servers=" + cluster.bootstrap(), "acks=all",
        "delivery.timeout.ms=60000"));
    String shown = String.join(" ", command.subList(4, command.size()));
    cluster.step("ceiling: " + shown);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    // The child must not outlive this run: not when reading its output fails or this thread is interrupted (a
    // test's timeout), and not when this JVM exits first (an orphaned ProducerPerformance kept retrying against a
    // broker that was gone, 23 minutes after a bench IT run had ended).
    Thread reaper = new Thread(p::destroyForcibly, "ceiling-reaper");
    Runtime.getRuntime().addShutdownHook(reaper);
    Summary summary = null;
    List<String> output = new ArrayList<>();
    try {
      try (BufferedReader out =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = out.readLine()) != null) {
          output.add(line);
          Summary s = parse(line);
          if (s != null) {
            summary = s;
          }
        }
      }
      p.waitFor(10, TimeUnit.MINUTES);
    } finally {
      if (p.isAlive()) {
        p.destroyForcibly();
      }
      try {
        Runtime.getRuntime().removeShutdownHook(reaper);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs anyway
      }
    }
    if (summary == null || summary.records() != records) {
      List<String> tail = output.subList(Math.max(0, output.size() - 20), output.size());
      throw new IllegalStateException("ProducerPerformance printed no final summary:\n" + String.join("\n", tail));
    }
    return summary;
  }

  /** Its final summary line, e.g. {@code 500000 records sent, 254841.0 records/sec (24.30 MB/sec), ...}. */
  static final Pattern SUMMARY = Pattern.compile(
      "(\\d+) records sent, ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), ([\\d.]+) ms avg latency, ([\\d.]+) ms max"
          + " latency(?:, (\\d+) ms 50th, (\\d+) ms 95th, (\\d+) ms 99th, (\\d+) ms 99.9th)?");

  private Ceiling() {}

  /** The parsed summary. */
  public record Summary(long records, double recordsPerSec, double mbPerSec, double avgLatencyMs,
      double maxLatencyMs, long p99LatencyMs, String line) {}

  /**
   * Runs ProducerPerformance ({@code acks=all}, unthrottled) and puts its figures into {@code result}.
   *
   * @return records/s of the raw producer
   */
  public static double measure(BenchCluster cluster, Result result, int partitions, int recordSize, long records)
      throws Exception {
    Summary summary;
    try {
      summary = run(cluster, "ceiling", partitions, recordSize, records);
    } catch (IllegalStateException e) {
      // Seen under load on a just-created topic: the idempotent producer keeps getting OUT_OF_ORDER_SEQUENCE_NUMBER
      // until its delivery timeout. One more try on a fresh topic.
      cluster.step("ceiling: no summary (" + e.getMessage().lines().findFirst().orElse("") + "), retrying once");
      summary = run(cluster, "ceiling-retry", partitions, recordSize, records);
    }
    cluster.step("ceiling: " + summary.line());
    result.ceiling("tool", "org.apache.kafka.tools.ProducerPerformance (kafka-tools "
        + org.apache.kafka.common.utils.AppInfoParser.getVersion() + ")");
    result.ceiling("args", "--num-records " + records + " --record-size " + recordSize
        + " --throughput -1 --producer-props bootstrap.servers=<broker> acks=all delivery.timeout.ms=60000");
    result.ceiling("partitions", partitions);
    result.ceiling("recordSizeBytes", recordSize);
    result.ceiling("records", summary.records());
    result.ceiling("recordsPerSec", summary.recordsPerSec());
    result.ceiling("mbPerSec", summary.mbPerSec());
    result.ceiling("avgLatencyMs", summary.avgLatencyMs());
    result.ceiling("p99LatencyMs", summary.p99LatencyMs());
    result.ceiling("summaryLine", summary.line());
    result.figure("ceiling: ProducerPerformance", summary.recordsPerSec(), "records/s");
    return summary.recordsPerSec();
  }

  static Summary parse(String line) {
    Matcher m = SUMMARY.matcher(line);
    if (!m.find()) {
      return null;
    }
    return new Summary(Long.parseLong(m.group(1)), Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3)),
        Double.parseDouble(m.group(4)), Double.parseDouble(m.group(5)),
        m.group(8) == null ? -1 : Long.parseLong(m.group(8)), m.group(0).trim());
  }

  /** Records for a run of roughly {@code seconds} at the rates seen here, never fewer than 20k. */
  public static long records(BenchOptions options, int recordSize) {
    long perSecond = recordSize <= 200 ? 250_000 : 90_000;
    return options.count("ceiling-records", Math.round(perSecond * 6.0), 20_000);
  }

  static String format(double v) {
    return String.format(Locale.ROOT, "%,.0f", v);
  }
}
