package dev.impipe.bench.report;

import java.util.concurrent.atomic.LongAccumulator;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Recorder;

/**
 * A latency histogram with its unit: HdrHistogram's {@link ConcurrentHistogram} for the whole run (three
 * significant digits, so a reported percentile is at most 0.1% above the true value, never below it; values below
 * 2048 are exact) and a {@link Recorder} for the samples of the current interval ({@link #takeInterval()}), for a
 * percentile-over-time series. The minimum and maximum are kept exactly. Thread-safe; it resizes itself to the
 * largest value seen, so it takes every sample of a long run.
 */
public final class LatencyRecorder {

  private static final int SIGNIFICANT_DIGITS = 3;

  private final String unit;
  private final ConcurrentHistogram whole = new ConcurrentHistogram(SIGNIFICANT_DIGITS);
  private final Recorder interval = new Recorder(SIGNIFICANT_DIGITS);
  private final LongAccumulator max = new LongAccumulator(Math::max, Long.MIN_VALUE);
  private final LongAccumulator min = new LongAccumulator(Math::min, Long.MAX_VALUE);

  /** @param unit what the recorded values are, e.g. {@code ms} or {@code us} */
  public LatencyRecorder(String unit) {
    this.unit = unit;
  }

  /**
   * The samples recorded since the previous call (or since creation), as an HdrHistogram of their own; counting
   * goes on in a fresh one (HdrHistogram's interval recording: no sample is lost or counted twice).
   */
  public org.HdrHistogram.Histogram takeInterval() {
    return interval.getIntervalHistogram();
  }

  public String unit() {
    return unit;
  }

  /** Records one value; negative values count as 0 (clock skew between two readings of the same clock cannot
   * happen, but a value computed from two clocks can). */
  public void record(long value) {
    long v = Math.max(0, value);
    whole.recordValue(v);
    interval.recordValue(v);
    max.accumulate(v);
    min.accumulate(v);
  }

  public long count() {
    return whole.getTotalCount();
  }

  public long max() {
    return count() == 0 ? 0 : max.get();
  }

  public long min() {
    return count() == 0 ? 0 : min.get();
  }

  public double mean() {
    return count() == 0 ? 0 : whole.getMean();
  }

  /**
   * The value below or at which {@code percentile} percent of the samples fall (the upper edge of its bucket,
   * capped at the exact maximum); 0 when empty.
   */
  public long percentile(double percentile) {
    return count() == 0 ? 0 : Math.min(whole.getValueAtPercentile(percentile), max());
  }

  /** A one-line summary, e.g. {@code n=1000 p50=3ms p99=12ms max=40ms}. */
  public String summary() {
    return String.format(java.util.Locale.ROOT, "n=%d p50=%d%s p90=%d%s p99=%d%s p99.9=%d%s max=%d%s", count(),
        percentile(50), unit, percentile(90), unit, percentile(99), unit, percentile(99.9), unit, max(), unit);
  }
}
