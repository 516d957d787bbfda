package dev.impipe.bench.report;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAccumulator;

/**
 * A log-linear latency histogram (HdrHistogram's layout, much simplified): values below 256 are counted exactly,
 * larger ones in buckets 1/128 of their power of two wide, so a reported percentile is at most 0.8% above the true
 * value (never below it). The maximum is kept exactly. Thread-safe and lock-free; fixed size (64 KB) whatever the
 * count, so it can take every sample of a long run. It also counts the samples of the current interval apart
 * ({@link #takeInterval()}), for a percentile-over-time series.
 */
public final class Histogram {

  private static final int SUB_BITS = 8;
  private static final int HALF = 1 << (SUB_BITS - 1);
  private static final int BUCKETS = (64 - SUB_BITS + 2) * HALF;

  private final String unit;
  private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
  private final AtomicLong total = new AtomicLong();
  private final AtomicLong sum = new AtomicLong();
  private final LongAccumulator max = new LongAccumulator(Math::max, Long.MIN_VALUE);
  private final LongAccumulator min = new LongAccumulator(Math::min, Long.MAX_VALUE);
  /** The samples since the last {@link #takeInterval()}; null in an interval histogram itself. */
  private volatile Histogram interval;

  /** @param unit what the recorded values are, e.g. {@code ms} or {@code us} */
  public Histogram(String unit) {
    this(unit, true);
  }

  private Histogram(String unit, boolean withInterval) {
    this.unit = unit;
    this.interval = withInterval ? new Histogram(unit, false) : null;
  }

  /**
   * The samples recorded since the previous call (or since creation), as a histogram of their own; counting goes
   * on in a fresh one. A sample recorded while the two are swapped may land in either.
   */
  public Histogram takeInterval() {
    Histogram taken = interval;
    if (taken == null) {
      throw new IllegalStateException("an interval histogram has no interval of its own");
    }
    interval = new Histogram(unit, false);
    return taken;
  }

  public String unit() {
    return unit;
  }

  /** Records one value; negative values count as 0 (clock skew between two readings of the same clock cannot
   * happen, but a value computed from two clocks can). */
  public void record(long value) {
    long v = Math.max(0, value);
    counts.incrementAndGet(index(v));
    total.incrementAndGet();
    sum.addAndGet(v);
    max.accumulate(v);
    min.accumulate(v);
    Histogram window = interval;
    if (window != null) {
      window.record(v);
    }
  }

  static int index(long v) {
    if (v < 2L * HALF) {
      return (int) v;
    }
    int shift = 63 - Long.numberOfLeadingZeros(v) - (SUB_BITS - 1);
    return (int) ((shift + 1) * HALF + (v >>> shift) - HALF);
  }

  /** The largest value that lands in bucket {@code index}. */
  static long highestEquivalent(int index) {
    if (index < 2 * HALF) {
      return index;
    }
    int shift = index / HALF - 1;
    long m = index - (long) shift * HALF;
    long high = ((m + 1) << shift) - 1;
    return high < 0 ? Long.MAX_VALUE : high;
  }

  public long count() {
    return total.get();
  }

  public long max() {
    return count() == 0 ? 0 : max.get();
  }

  public long min() {
    return count() == 0 ? 0 : min.get();
  }

  public double mean() {
    long n = count();
    return n == 0 ? 0 : (double) sum.get() / n;
  }

  /**
   * The value below or at which {@code percentile} percent of the samples fall (the upper edge of its bucket,
   * capped at the exact maximum); 0 when empty.
   */
  public long percentile(double percentile) {
    long n = count();
    if (n == 0) {
      return 0;
    }
    long rank = Math.max(1, (long) Math.ceil(percentile / 100.0 * n));
    long seen = 0;
    for (int i = 0; i < BUCKETS; i++) {
      seen += counts.get(i);
      if (seen >= rank) {
        return Math.min(highestEquivalent(i), max());
      }
    }
    return max();
  }

  /** A one-line summary, e.g. {@code n=1000 p50=3ms p99=12ms max=40ms}. */
  public String summary() {
    return String.format(java.util.Locale.ROOT, "n=%d p50=%d%s p90=%d%s p99=%d%s p99.9=%d%s max=%d%s", count(),
        percentile(50), unit, percentile(90), unit, percentile(99), unit, percentile(99.9), unit, max(), unit);
  }
}
