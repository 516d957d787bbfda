package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RateLimitTest {

  private static final long SECOND = 1_000_000_000L;

  @Test
  void aheadOfTheRateWaitsUntilTheBatchIsDue() {
    // Given 100 records/s from t=0
    RateLimit rate = new RateLimit(100, 0);

    // When 50 are sent at t=0.1 s, they were due at 0.5 s: wait 0.4 s
    assertThat(rate.sent(50, SECOND / 10)).isEqualTo(4 * SECOND / 10);
    // When 50 more are sent at t=2 s (behind the rate): no wait
    assertThat(rate.sent(50, 2 * SECOND)).isZero();
  }

  @Test
  void zeroMeansNoLimit() {
    assertThat(new RateLimit(0, 0).sent(1_000_000, 1)).isZero();
  }
}
