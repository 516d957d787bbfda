package dev.impipe.bench.report;

import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The cumulative buckets of one Prometheus histogram ({@code NAME_bucket{le="..."} COUNT} lines of a {@code /metrics}
 * text, summed over label sets), so that the percentiles of an interval come from two scrapes: {@code
 * end.minus(start).percentile(99)}. A percentile is interpolated linearly inside the bucket that holds its rank, as
 * Prometheus's {@code histogram_quantile} does; its error is at most that bucket's width.
 */
public final class PromHistogram {

  private static final Pattern LE = Pattern.compile("le=\"([^\"]+)\"");

  /** Upper bound (seconds, +Inf as {@link Double#POSITIVE_INFINITY}) -> observations at or below it. */
  private final TreeMap<Double, Double> cumulative;

  private PromHistogram(TreeMap<Double, Double> cumulative) {
    this.cumulative = cumulative;
  }

  /** The buckets of histogram {@code name} in Prometheus text {@code text}; empty if it has none. */
  public static PromHistogram parse(String text, String name) {
    TreeMap<Double, Double> buckets = new TreeMap<>();
    String prefix = name + "_bucket{";
    for (String line : text.split("\n")) {
      if (!line.startsWith(prefix)) {
        continue;
      }
      Matcher m = LE.matcher(line);
      if (!m.find()) {
        continue;
      }
      double le = "+Inf".equals(m.group(1)) ? Double.POSITIVE_INFINITY : Double.parseDouble(m.group(1));
      double count = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      buckets.merge(le, count, Double::sum);
    }
    return new PromHistogram(buckets);
  }

  /** The observations made between {@code earlier} and this one. */
  public PromHistogram minus(PromHistogram earlier) {
    TreeMap<Double, Double> d = new TreeMap<>();
    for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
      d.put(e.getKey(), e.getValue() - earlier.cumulative.getOrDefault(e.getKey(), 0.0));
    }
    return new PromHistogram(d);
  }

  /**
   * Observations at or below {@code bound}: exact when it is one of the histogram's bucket bounds, else those at or
   * below the largest bound under it.
   */
  public double atOrBelow(double bound) {
    Map.Entry<Double, Double> e = cumulative.floorEntry(bound);
    return e == null ? 0 : e.getValue();
  }

  /** Observations in total. */
  public double count() {
    return cumulative.isEmpty() ? 0 : cumulative.lastEntry().getValue();
  }

  /**
   * The {@code p}-th percentile in the histogram's unit, NaN without observations; a rank in the +Inf bucket is
   * reported as the largest finite bound.
   */
  public double percentile(double p) {
    double total = count();
    if (total <= 0) {
      return Double.NaN;
    }
    double rank = total * p / 100.0;
    double lowerBound = 0;
    double below = 0;
    for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
      if (e.getValue() >= rank && e.getValue() > below) {
        if (e.getKey().isInfinite()) {
          return lowerBound;
        }
        return lowerBound + (e.getKey() - lowerBound) * (rank - below) / (e.getValue() - below);
      }
      lowerBound = e.getKey().isInfinite() ? lowerBound : e.getKey();
      below = e.getValue();
    }
    return lowerBound;
  }
}
