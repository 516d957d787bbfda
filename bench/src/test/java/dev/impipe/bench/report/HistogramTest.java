package dev.impipe.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HistogramTest {

  @Test
  void smallValuesAreExact() {
    Histogram h = new Histogram("ms");
    for (int v = 1; v <= 100; v++) {
      h.record(v);
    }
    assertThat(h.count()).isEqualTo(100);
    assertThat(h.percentile(50)).isEqualTo(50);
    assertThat(h.percentile(99)).isEqualTo(99);
    assertThat(h.percentile(100)).isEqualTo(100);
    assertThat(h.max()).isEqualTo(100);
    assertThat(h.min()).isEqualTo(1);
    assertThat(h.mean()).isEqualTo(50.5);
  }

  @Test
  void largeValuesAreWithinOnePercentAndNeverBelowTheTruePercentile() {
    Histogram h = new Histogram("us");
    SplittableRandom random = new SplittableRandom(1);
    long[] values = new long[100_000];
    for (int i = 0; i < values.length; i++) {
      values[i] = (long) Math.exp(random.nextDouble() * 20);
      h.record(values[i]);
    }
    Arrays.sort(values);
    for (double p : new double[] {50, 90, 99, 99.9}) {
      long exact = values[(int) Math.ceil(p / 100 * values.length) - 1];
      assertThat(h.percentile(p)).as("p%s", p).isBetween(exact, (long) (exact * 1.01) + 1);
    }
    assertThat(h.max()).isEqualTo(values[values.length - 1]);
  }

  @Test
  void bucketsAreContiguousAndCoverEveryLong() {
    long previousHigh = -1;
    for (int i = 0; Histogram.highestEquivalent(i) != Long.MAX_VALUE; i++) {
      long high = Histogram.highestEquivalent(i);
      assertThat(Histogram.index(previousHigh + 1)).isEqualTo(i);
      assertThat(Histogram.index(high)).isEqualTo(i);
      previousHigh = high;
    }
    assertThat(Histogram.index(Long.MAX_VALUE)).isPositive();
  }

  @Test
  void emptyAndNegative() {
    Histogram h = new Histogram("ms");
    assertThat(h.percentile(99)).isZero();
    assertThat(h.max()).isZero();
    h.record(-5);
    assertThat(h.max()).isZero();
    assertThat(h.count()).isEqualTo(1);
  }
}
