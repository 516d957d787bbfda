package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.PromHistogram;
import dev.impipe.bench.report.Result;
import dev.impipe.bench.report.ThreadCpu;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * {@code bench push --stages 1}: send -> device split into legs, per phase, with the CPU of each JVM beside them.
 * All legs start at the message's send time (the inbox record's timestamp; the machine's one clock for all JVMs):
 * <ol>
 *   <li>committed: the inbox entry visible to a {@code read_committed} reader (one more consumer in this JVM,
 *       like {@code bench fanout --stages 1}): produce + fan-out + its transaction's commit;
 *   <li>reader: the gateway's reader polled it ({@code im_push_reader_lag_seconds});
 * </ol>
 * then, from the gateway's reader on: handed to the connection, its frame queued on the socket ({@code
 * im_push_reader_handoff_seconds}); the frame written to the network ({@code im_push_socket_write_seconds}). The
 * gateway's legs are histograms of its {@code /metrics}, scraped at the phase's start and end (two scrapes per phase:
 * each costs the pipeline tens of ms of CPU), their percentiles interpolated in the buckets. The last leg, to the
 * device, is the scenario's own send -> device receives. CPU: utime + stime of each process ({@code /proc/PID/stat},
 * read through {@link ProcessHandle}), per second as series and per phase as cores.
 */
final class PushStages implements AutoCloseable {

  /** Gateway histograms: metric -> leg name. */
  private static final Map<String, String> GATEWAY_LEGS = gatewayLegs();

  private final PipelineJvm pipeline;
  private final BenchCluster cluster;
  private final Result result;
  private final PrintStream log;
  private final TopicWatcher committed;
  private volatile LatencyRecorder current;
  private volatile long phaseStartMs = Long.MAX_VALUE;

  private static Map<String, String> gatewayLegs() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("im_push_reader_lag_seconds", "sentAt -> gateway reader polled it");
    m.put("im_push_reader_handoff_seconds", "gateway reader polled -> frame queued on the socket");
    m.put("im_push_socket_write_seconds", "frame queued -> written to the socket");
    return m;
  }

  private PushStages(BenchCluster cluster, PipelineJvm pipeline, Result result, PrintStream log) throws Exception {
    this.cluster = cluster;
    this.pipeline = pipeline;
    this.result = result;
    this.log = log;
    this.committed = new TopicWatcher(cluster, cluster.names().inbox(), true, r -> {
      LatencyRecorder to = current;
      if (to != null && r.timestamp() >= phaseStartMs) {
        to.record(Math.max(0, System.currentTimeMillis() - r.timestamp()));
      }
    });
  }

  /** The legs' recorder, or null when {@code on} is false (the bench measures as without --stages). */
  static PushStages startIf(boolean on, BenchCluster cluster, PipelineJvm pipeline, Result result, PrintStream log)
      throws Exception {
    return on ? new PushStages(cluster, pipeline, result, log) : null;
  }

  /** Starts recording phase {@code name} ("full speed", "half rate"); close the handle at its end. */
  Phase begin(String name) {
    return new Phase(name);
  }

  /** One measured phase: the committed leg's histogram, the gateway's histograms at its start, each JVM's CPU. */
  final class Phase implements AutoCloseable {
    private final String name;
    private final Map<String, PromHistogram> gatewayStart = new LinkedHashMap<>();
    private final long startNanos = System.nanoTime();
    private final double[] cpuStart;
    private final double gcStart;
    private final List<Progress> cpuSeries = new ArrayList<>();

    private Phase(String name) {
      this.name = name;
      String text = pipeline.scrape();
      GATEWAY_LEGS.keySet().forEach(m -> gatewayStart.put(m, PromHistogram.parse(text, m)));
      cpuStart = cpu();
      gcStart = sum(text, "jvm_gc_pause_seconds_sum");
      current = result.latency("leg (" + name + "): sentAt -> inbox entry committed (read_committed reader)", "ms");
      phaseStartMs = System.currentTimeMillis();
      String[] jvms = jvmNames();
      for (int i = 0; i < jvms.length; i++) {
        int k = i;
        cpuSeries.add(Progress.start(log, result, "CPU " + jvms[i] + " (" + name + ")", "ms", 0,
            () -> (long) (cpu()[k] * 1000), null, "CPU " + jvms[i] + " (" + name + ")"));
      }
    }

    @Override
    public void close() {
      double seconds = (System.nanoTime() - startNanos) / 1e9;
      current = null;
      cpuSeries.forEach(Progress::close);
      String text = pipeline.scrape();
      for (Map.Entry<String, String> leg : GATEWAY_LEGS.entrySet()) {
        PromHistogram h = PromHistogram.parse(text, leg.getKey()).minus(gatewayStart.get(leg.getKey()));
        for (int p : new int[] {50, 99}) {
          result.figure("leg (" + name + "): " + leg.getValue() + " p" + p, h.percentile(p) * 1000, "ms");
        }
      }
      result.figure("pipeline JVM in GC pauses (" + name + ")", (sum(text, "jvm_gc_pause_seconds_sum") - gcStart)
          * 1000 / seconds, "ms/s");
      double[] end = cpu();
      String[] jvms = jvmNames();
      for (int i = 0; i < jvms.length; i++) {
        result.figure("CPU (" + name + "): " + jvms[i], (end[i] - cpuStart[i]) / seconds, "cores");
      }
    }
  }

  /** Sum of the samples of {@code metric} in Prometheus text {@code text}. */
  private static double sum(String text, String metric) {
    double sum = 0;
    for (String line : text.split("\n")) {
      if (line.startsWith(metric + "{") || line.startsWith(metric + " ")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  private static String[] jvmNames() {
    return new String[] {"pipeline JVM (fan-out, inbox store, ACK wheel, gateway)", "broker JVM",
        "bench JVM (devices, producer, watchers)"};
  }

  /** CPU seconds so far of the pipeline JVM, the broker's and this one (0 for a broker not started here). */
  private double[] cpu() {
    OptionalLong broker = cluster.brokerPid();
    return new double[] {seconds(pipeline.process.pid()), broker.isPresent() ? seconds(broker.getAsLong()) : 0,
        ThreadCpu.processSeconds(ProcessHandle.current())};
  }

  private static double seconds(long pid) {
    return ProcessHandle.of(pid).map(ThreadCpu::processSeconds).orElse(0.0);
  }

  @Override
  public void close() throws InterruptedException {
    committed.close();
  }
}
