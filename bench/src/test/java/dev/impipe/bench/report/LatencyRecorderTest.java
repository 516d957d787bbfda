package dev.impipe.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LatencyRecorderTest {

  @Test
  void smallValuesAreExact() {
    LatencyRecorder h = new LatencyRecorder("ms");
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
  void largeValuesAreWithinATenthOfAPercentAndNeverBelowTheTruePercentile() {
    LatencyRecorder h = new LatencyRecorder("us");
    SplittableRandom random = new SplittableRandom(1);
    long[] values = new long[100_000];
    for (int i = 0; i < values.length; i++) {
      values[i] = (long) Math.exp(random.nextDouble() * 20);
      h.record(values[i]);
    }
    Arrays.sort(values);
    for (double p : new double[] {50, 90, 99, 99.9}) {
      long exact = values[(int) Math.ceil(p / 100 * values.length) - 1];
      assertThat(h.percentile(p)).as("p%s", p).isBetween(exact, (long) (exact * 1.001) + 1);
    }
    assertThat(h.max()).isEqualTo(values[values.length - 1]);
  }

  @Test
  void anIntervalHoldsOnlyTheSamplesSinceThePreviousOne() {
    LatencyRecorder h = new LatencyRecorder("ms");
    h.record(10);
    h.record(20);
    assertThat(h.takeInterval().getTotalCount()).isEqualTo(2);
    h.record(3_000);
    org.HdrHistogram.Histogram second = h.takeInterval();
    assertThat(second.getTotalCount()).isEqualTo(1);
    assertThat(second.getValueAtPercentile(99)).isBetween(3_000L, 3_003L);
    assertThat(h.takeInterval().getTotalCount()).isZero();
    assertThat(h.count()).as("the whole-run histogram keeps every sample").isEqualTo(3);
  }

  @Test
  void emptyAndNegative() {
    LatencyRecorder h = new LatencyRecorder("ms");
    assertThat(h.percentile(99)).isZero();
    assertThat(h.max()).isZero();
    h.record(-5);
    assertThat(h.max()).isZero();
    assertThat(h.count()).isEqualTo(1);
  }
}
