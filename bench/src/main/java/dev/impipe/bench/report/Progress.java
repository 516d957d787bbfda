package dev.impipe.bench.report;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The live progress line of one phase on stderr: done / total, the rate over the last second, ETA, and any extra
 * status. Updated in place (carriage return) on a terminal, one line every 5 s otherwise (logs, CI). Also samples
 * the rate into a {@link Series} once a second, for the chart.
 */
public final class Progress implements AutoCloseable {

  private final PrintStream out;
  private final String label;
  private final String unit;
  private final long total;
  private final LongSupplier done;
  private final Supplier<String> extra;
  private final Series series;
  private final Result result;
  private final boolean terminal;
  private final ScheduledExecutorService timer;
  private final long start = System.nanoTime();
  private long lastDone;
  private long lastAt = start;
  private long lastPrinted;
  private double lastRate;

  private Progress(PrintStream out, Result result, String label, String unit, long total, LongSupplier done,
      Supplier<String> extra, Series series) {
    this.out = out;
    this.result = result;
    this.label = label;
    this.unit = unit;
    this.total = total;
    this.done = done;
    this.extra = extra;
    this.series = series;
    this.terminal = System.console() != null;
    this.lastDone = done.getAsLong();
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "bench-progress");
      t.setDaemon(true);
      return t;
    });
    timer.scheduleAtFixedRate(this::tick, 1, 1, TimeUnit.SECONDS);
  }

  /**
   * Starts showing a phase.
   *
   * @param total expected count, 0 if unknown (no ETA)
   * @param done the count so far
   * @param extra more status for the line (may return "")
   * @param seriesName the rate series to sample into (unit {@code unit/s}), or null
   */
  public static Progress start(PrintStream out, Result result, String label, String unit, long total,
      LongSupplier done, Supplier<String> extra, String seriesName) {
    Series series = seriesName == null ? null : result.series(seriesName, unit + "/s");
    return new Progress(out, result, label, unit, total, done, extra, series);
  }

  private synchronized void tick() {
    try {
      long now = System.nanoTime();
      long d = done.getAsLong();
      double rate = (d - lastDone) / ((now - lastAt) / 1e9);
      lastDone = d;
      lastAt = now;
      lastRate = rate;
      if (series != null) {
        series.add(result.elapsedSeconds(), rate);
      }
      if (terminal || now - lastPrinted >= 5_000_000_000L) {
        lastPrinted = now;
        out.print((terminal ? "\r" : "") + line(d, rate) + (terminal ? "\u001b[K" : "\n"));
        out.flush();
      }
    } catch (RuntimeException e) {
      // A failing status supplier must not kill the timer: the next tick tries again.
      out.println("\n[bench] progress: " + e);
    }
  }

  private String line(long d, double rate) {
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "[bench %s] %s %,d", result.scenario(), label,
        d));
    if (total > 0) {
      s.append(String.format(Locale.ROOT, "/%,d", total));
    }
    s.append(' ').append(unit).append(String.format(Locale.ROOT, "  %,.0f/s", rate));
    if (total > 0 && rate > 0 && d < total) {
      s.append(String.format(Locale.ROOT, "  ETA %.0fs", (total - d) / rate));
    }
    s.append(String.format(Locale.ROOT, "  (%.0fs)", (System.nanoTime() - start) / 1e9));
    String more = extra == null ? "" : extra.get();
    if (!more.isEmpty()) {
      s.append("  ").append(more);
    }
    return s.toString();
  }

  /** The rate measured by the last tick. */
  public synchronized double lastRate() {
    return lastRate;
  }

  @Override
  public synchronized void close() {
    timer.shutdownNow();
    long d = done.getAsLong();
    double seconds = (System.nanoTime() - start) / 1e9;
    if (series != null && seconds > 0) {
      // A phase shorter than a tick would otherwise leave its series empty (and invisible in the chart): its
      // average rate over the phase is the last point.
      long now = System.nanoTime();
      double tail = (d - lastDone) / Math.max(1e-3, (now - lastAt) / 1e9);
      series.add(result.elapsedSeconds(), series.points().isEmpty() ? d / seconds : tail);
    }
    out.print((terminal ? "\r" : "") + line(d, seconds > 0 ? d / seconds : 0).replace("/s ", "/s avg ")
        + (terminal ? "\u001b[K\n" : "\n"));
    out.flush();
  }
}
