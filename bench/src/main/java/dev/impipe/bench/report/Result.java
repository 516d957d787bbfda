package dev.impipe.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Everything one scenario run measured: figures (with the performance target they answer to, if any), latency
 * histograms, time series, the producer ceiling, and free-text notes. Written as JSON, Markdown and an SVG chart.
 */
public final class Result {

  /** One measured number; {@code target} is a human-readable condition such as {@code >= 0.5}, or null. */
  public record Figure(String name, double value, String unit, String target, Boolean met) {}

  /** Name suffix of the series that follow a latency histogram over time (its p99 in each second). */
  public static final String LATENCY_SERIES_SUFFIX = " - p99 of each second";

  private final String scenario;
  private final Instant startedAt = Instant.now();
  private final long t0 = System.nanoTime();
  private final Map<String, Object> setup = new LinkedHashMap<>();
  private final Map<String, Object> ceiling = new LinkedHashMap<>();
  private final List<Figure> figures = new ArrayList<>();
  private final Map<String, LatencyRecorder> latencies = new LinkedHashMap<>();
  private final Map<String, Series> series = new LinkedHashMap<>();
  private final List<String> notes = new ArrayList<>();
  private final Map<String, Object> machine = new LinkedHashMap<>();
  private ScheduledExecutorService latencySampler;

  public Result(String scenario, String command) {
    this.scenario = scenario;
    setup.put("command", command);
    machine.putAll(Machine.describe());
    machine.put("loadAverageAtStart", Machine.loadAverage());
  }

  public String scenario() {
    return scenario;
  }

  /** Seconds since the run started (the time axis of every series). */
  public double elapsedSeconds() {
    return (System.nanoTime() - t0) / 1e9;
  }

  public synchronized void setup(String key, Object value) {
    setup.put(key, value);
  }

  public synchronized void ceiling(String key, Object value) {
    ceiling.put(key, value);
  }

  public synchronized Object ceiling(String key) {
    return ceiling.get(key);
  }

  public synchronized Figure figure(String name, double value, String unit) {
    return figure(name, value, unit, null, null);
  }

  public synchronized Figure figure(String name, double value, String unit, String target, Boolean met) {
    Figure f = new Figure(name, value, unit, target, met);
    figures.add(f);
    return f;
  }

  public synchronized List<Figure> figures() {
    return List.copyOf(figures);
  }

  /** The figure called {@code name}; throws if none was recorded. */
  public synchronized double value(String name) {
    return figures.stream().filter(f -> f.name().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no figure " + name)).value();
  }

  /**
   * The latency histogram called {@code name}; its p99 in each second is also followed as the series
   * {@code name + }{@link #LATENCY_SERIES_SUFFIX} (sampled once a second until {@link #write}).
   */
  public synchronized LatencyRecorder latency(String name, String unit) {
    if (latencySampler == null) {
      latencySampler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "bench-latency-sampler");
        t.setDaemon(true);
        return t;
      });
      latencySampler.scheduleAtFixedRate(this::sampleLatencies, 1, 1, TimeUnit.SECONDS);
    }
    return latencies.computeIfAbsent(name, n -> new LatencyRecorder(unit));
  }

  /** Adds one point per latency histogram that recorded anything since the last call: that interval's p99. */
  synchronized void sampleLatencies() {
    double at = elapsedSeconds();
    latencies.forEach((name, h) -> {
      org.HdrHistogram.Histogram window = h.takeInterval();
      if (window.getTotalCount() > 0) {
        series(name + LATENCY_SERIES_SUFFIX, h.unit()).add(at, window.getValueAtPercentile(99));
      }
    });
  }

  public synchronized Map<String, LatencyRecorder> latencies() {
    return Map.copyOf(latencies);
  }

  public synchronized Series series(String name, String unit) {
    return series.computeIfAbsent(name, n -> new Series(n, unit));
  }

  public synchronized void note(String text) {
    notes.add(text);
  }

  /** Writes {@code SCENARIO-<time>.json}, {@code .md} and {@code .svg} into {@code dir}; returns the JSON path. */
  public synchronized Path write(Path dir) throws IOException {
    if (latencySampler != null) {
      latencySampler.shutdownNow();
      sampleLatencies();
    }
    machine.put("loadAverageAtEnd", Machine.loadAverage());
    machine.put("durationSeconds", round(elapsedSeconds()));
    Files.createDirectories(dir);
    String stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT).withZone(ZoneOffset.UTC)
        .format(startedAt);
    String base = scenario + "-" + stamp;
    Path json = dir.resolve(base + ".json");
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    Files.writeString(json, mapper.writeValueAsString(toMap()) + "\n", StandardCharsets.UTF_8);
    Files.writeString(dir.resolve(base + ".svg"), SvgChart.render(this), StandardCharsets.UTF_8);
    Files.writeString(dir.resolve(base + ".md"), markdown(base + ".svg"), StandardCharsets.UTF_8);
    return json;
  }

  synchronized Map<String, Series> seriesMap() {
    return new LinkedHashMap<>(series);
  }

  synchronized Map<String, LatencyRecorder> latencyMap() {
    return new LinkedHashMap<>(latencies);
  }

  /** The JSON document. */
  public synchronized Map<String, Object> toMap() {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("scenario", scenario);
    root.put("startedAt", startedAt.toString());
    root.put("machine", machine);
    root.put("setup", setup);
    root.put("ceiling", ceiling);
    List<Map<String, Object>> figs = new ArrayList<>();
    for (Figure f : figures) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", f.name());
      m.put("value", round(f.value()));
      m.put("unit", f.unit());
      if (f.target() != null) {
        m.put("target", f.target());
        m.put("met", f.met());
      }
      figs.add(m);
    }
    root.put("figures", figs);
    Map<String, Object> lat = new LinkedHashMap<>();
    latencies.forEach((name, h) -> lat.put(name, histogramMap(h)));
    root.put("latencies", lat);
    Map<String, Object> ser = new LinkedHashMap<>();
    series.forEach((name, s) -> {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("unit", s.unit());
      m.put("points", s.points().stream().map(p -> List.of(round(p[0]), round(p[1]))).toList());
      ser.put(name, m);
    });
    root.put("series", ser);
    root.put("notes", notes);
    return root;
  }

  private static Map<String, Object> histogramMap(LatencyRecorder h) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("unit", h.unit());
    m.put("count", h.count());
    m.put("min", h.min());
    m.put("mean", round(h.mean()));
    m.put("p50", h.percentile(50));
    m.put("p90", h.percentile(90));
    m.put("p99", h.percentile(99));
    m.put("p99.9", h.percentile(99.9));
    m.put("max", h.max());
    return m;
  }

  /** The Markdown summary. */
  public synchronized String markdown(String svgName) {
    StringBuilder md = new StringBuilder();
    md.append("# bench ").append(scenario).append(" — ").append(startedAt).append("\n\n");
    md.append("Command: `").append(setup.get("command")).append("`  \n");
    md.append("Machine: ").append(machine.get("cpus")).append(" CPUs, ").append(machine.get("os")).append(", Java ")
        .append(machine.get("java")).append(", load average ").append(machine.get("loadAverageAtStart"))
        .append(" at start, ").append(machine.get("loadAverageAtEnd")).append(" at end, ")
        .append(machine.get("durationSeconds")).append(" s\n\n");
    md.append("## Setup\n\n");
    setup.forEach((k, v) -> {
      if (!k.equals("command")) {
        md.append("- ").append(k).append(": ").append(v).append('\n');
      }
    });
    if (!ceiling.isEmpty()) {
      md.append("\n## Ceiling: Kafka's ProducerPerformance on the same broker\n\n");
      ceiling.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
    }
    md.append("\n## Figures\n\n| figure | value | unit | target | met |\n|---|---:|---|---|---|\n");
    for (Figure f : figures) {
      md.append("| ").append(f.name()).append(" | ").append(format(f.value())).append(" | ").append(f.unit())
          .append(" | ").append(f.target() == null ? "" : f.target()).append(" | ")
          .append(f.met() == null ? "" : f.met() ? "yes" : "**no**").append(" |\n");
    }
    if (!latencies.isEmpty()) {
      md.append("\n## Latencies\n\n| measure | unit | count | p50 | p90 | p99 | p99.9 | max |\n"
          + "|---|---|---:|---:|---:|---:|---:|---:|\n");
      latencies.forEach((name, h) -> md.append("| ").append(name).append(" | ").append(h.unit()).append(" | ")
          .append(h.count()).append(" | ").append(h.percentile(50)).append(" | ").append(h.percentile(90))
          .append(" | ").append(h.percentile(99)).append(" | ").append(h.percentile(99.9)).append(" | ")
          .append(h.max()).append(" |\n"));
    }
    if (!notes.isEmpty()) {
      md.append("\n## Notes\n\n");
      notes.forEach(n -> md.append("- ").append(n).append('\n'));
    }
    md.append("\n![chart](").append(svgName).append(")\n");
    return md.toString();
  }

  /** A number for people: thousands separated, at most 3 decimals. */
  public static String format(double v) {
    if (Math.abs(v) >= 1000 || v == Math.rint(v)) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    return String.format(Locale.ROOT, "%.3f", v).replaceAll("0+$", "").replaceAll("\\.$", "");
  }

  static double round(double v) {
    return Math.round(v * 1000.0) / 1000.0;
  }
}
