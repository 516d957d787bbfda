package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

/** The meters the delay processor reports into, read back from a registry. */
class DelayMetricsTest {

  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final DelayMetrics metrics = new DelayMetrics(meters);

  private double drainRate() {
    return meters.get("im.delay.drain.rate").gauge().value();
  }

  @Test
  void theDrainRateIsRecordsPerSecondOverWindowsOfAtLeastASecondFromTheFirstPunctuation() {
    // the window opens at the first punctuation (the wall clock reads 0 here)
    metrics.punctuated(300, 0);
    metrics.punctuated(200, 999);
    assertThat(drainRate()).as("under a second: not measured yet").isZero();

    // exactly one second: 1,000 records in it
    metrics.punctuated(500, 1_000);
    assertThat(drainRate()).isEqualTo(1_000.0);

    // the next window, 1,000 to 3,000: 100 records over two seconds
    metrics.punctuated(100, 3_000);
    assertThat(drainRate()).isEqualTo(50.0);
    assertThat(meters.get("im.delay.punctuation.records").summary().count()).isEqualTo(4);
    assertThat(meters.get("im.delay.punctuation.records").summary().max()).isEqualTo(500);
  }

  @Test
  void theDrainRateIsExportedUnderAPrometheusConventionalName() {
    // Given the meters in a Prometheus registry, as /metrics serves them
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new DelayMetrics(prometheus).punctuated(10, 0);

    // Then the gauge is im_delay_drain_rate: no abbreviated unit appended to its name (promtool check metrics)
    String scrape = prometheus.scrape();
    assertThat(scrape).contains("# TYPE im_delay_drain_rate gauge").doesNotContain("im_delay_drain_rate_");
  }

  @Test
  void eachAcceptedScheduleIsCounted() {
    metrics.scheduled();
    metrics.scheduled();
    assertThat(meters.get("im.delay.schedules").counter().count()).isEqualTo(2);
  }
}
