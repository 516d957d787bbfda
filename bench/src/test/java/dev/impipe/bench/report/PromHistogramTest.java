package dev.impipe.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class PromHistogramTest {

  private static String scrape(double upTo10ms, double upTo100ms, double upTo1s, double all) {
    return "# HELP im_x_seconds something\n"
        + "# TYPE im_x_seconds histogram\n"
        + "im_x_seconds_bucket{le=\"0.01\"} " + upTo10ms + "\n"
        + "im_x_seconds_bucket{le=\"0.1\"} " + upTo100ms + "\n"
        + "im_x_seconds_bucket{le=\"1.0\"} " + upTo1s + "\n"
        + "im_x_seconds_bucket{le=\"+Inf\"} " + all + "\n"
        + "im_x_seconds_count " + all + "\n"
        + "im_other_seconds_bucket{le=\"0.01\"} 1000\n";
  }

  @Test
  void givenTwoScrapes_whenSubtracted_thenThePercentilesAreThoseOfTheInterval() {
    // Given: 100 observations under 10 ms before the interval; 100 in it, 50 under 10 ms, 49 up to 100 ms, 1 up to 1 s
    PromHistogram start = PromHistogram.parse(scrape(100, 100, 100, 100), "im_x_seconds");
    PromHistogram end = PromHistogram.parse(scrape(150, 199, 200, 200), "im_x_seconds");

    // When
    PromHistogram interval = end.minus(start);

    // Then: interpolated inside the bucket holding the rank
    assertThat(interval.count()).isEqualTo(100);
    assertThat(interval.percentile(50)).isCloseTo(0.01, within(1e-9));
    assertThat(interval.percentile(99)).isCloseTo(0.1, within(1e-9));
    assertThat(interval.percentile(25)).isCloseTo(0.005, within(1e-9));
    assertThat(interval.percentile(100)).isCloseTo(1.0, within(1e-9));
  }

  @Test
  void givenLabelSets_whenParsed_thenTheirBucketsAreSummed() {
    String text = "im_y_seconds_bucket{route=\"a\",le=\"0.5\"} 3\n"
        + "im_y_seconds_bucket{route=\"b\",le=\"0.5\"} 1\n"
        + "im_y_seconds_bucket{route=\"a\",le=\"+Inf\"} 3\n"
        + "im_y_seconds_bucket{route=\"b\",le=\"+Inf\"} 1\n";

    assertThat(PromHistogram.parse(text, "im_y_seconds").count()).isEqualTo(4);
  }

  @Test
  void givenObservationsBeyondTheLastBound_thenThePercentileIsThatBound() {
    PromHistogram h = PromHistogram.parse(scrape(0, 0, 1, 10), "im_x_seconds");

    assertThat(h.percentile(99)).isEqualTo(1.0);
  }

  @Test
  void givenABucketBound_thenTheObservationsAtOrBelowItAreItsCount() {
    PromHistogram h = PromHistogram.parse(scrape(2, 5, 9, 10), "im_x_seconds");

    assertThat(h.atOrBelow(0.1)).isEqualTo(5);
    assertThat(h.atOrBelow(0.5)).isEqualTo(5);
    assertThat(h.atOrBelow(0.001)).isZero();
    assertThat(h.count() - h.atOrBelow(1.0)).isEqualTo(1);
  }

  @Test
  void givenNoObservations_thenPercentilesAreNaN() {
    assertThat(PromHistogram.parse("", "im_x_seconds").percentile(50)).isNaN();
  }
}
