package dev.impipe.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

  private static final Backoff BACKOFF = Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(5));

  @Test
  void delaysDoublePerAttemptUpToTheCap() {
    // Given a back-off of 100 ms doubling up to 5 s
    // When asked for the delay after each failed attempt
    // Then it is 100, 200, 400, ... and then the cap
    assertThat(BACKOFF.delay(0)).isEqualTo(Duration.ofMillis(100));
    assertThat(BACKOFF.delay(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(BACKOFF.delay(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(BACKOFF.delay(3)).isEqualTo(Duration.ofMillis(400));
    assertThat(BACKOFF.delay(6)).isEqualTo(Duration.ofMillis(3_200));
    assertThat(BACKOFF.delay(7)).isEqualTo(Duration.ofSeconds(5));
    assertThat(BACKOFF.delay(31)).isEqualTo(Duration.ofSeconds(5));
    assertThat(BACKOFF.delay(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void theCapIsReachedExactly() {
    Backoff toEight = Backoff.exponential(Duration.ofMillis(1), Duration.ofMillis(8));
    assertThat(toEight.delay(4)).isEqualTo(Duration.ofMillis(8));
    assertThat(toEight.delay(5)).isEqualTo(Duration.ofMillis(8));
    assertThat(toEight.nextMs(4)).isEqualTo(8);
    assertThat(toEight.nextMs(8)).isEqualTo(8);
  }

  @Test
  void nextDelayStartsAtTheInitialOneAndDoubles() {
    // Given no delay yet (a loop resets to 0 after a success)
    // Then the first is the initial delay, each next one twice the last, never above the cap
    assertThat(BACKOFF.nextMs(0)).isEqualTo(100);
    assertThat(BACKOFF.nextMs(-1)).isEqualTo(100);
    assertThat(BACKOFF.nextMs(30)).isEqualTo(100);
    assertThat(BACKOFF.nextMs(100)).isEqualTo(200);
    assertThat(BACKOFF.nextMs(1_200)).isEqualTo(2_400);
    assertThat(BACKOFF.nextMs(2_600)).isEqualTo(5_000);
    assertThat(BACKOFF.nextMs(5_000)).isEqualTo(5_000);
    assertThat(BACKOFF.nextMs(Long.MAX_VALUE)).isEqualTo(5_000);
  }

  @Test
  void aFixedBackoffAlwaysWaitsTheSame() {
    Backoff poll = Backoff.fixed(Duration.ofMillis(100));
    assertThat(poll.nextMs(0)).isEqualTo(100);
    assertThat(poll.nextMs(100)).isEqualTo(100);
    assertThat(poll.delay(5)).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void jitterTakesUpToItsFractionOff() {
    // Given a back-off with 50 % jitter
    Backoff jittered = BACKOFF.withJitter(0.5);
    // Then a draw of 0 keeps the delay, a draw near 1 halves it, and without jitter the draw does not matter
    assertThat(jittered.jittered(1_000, 0)).isEqualTo(1_000);
    assertThat(jittered.jittered(1_000, 0.5)).isEqualTo(750);
    assertThat(jittered.jittered(1_000, 0.999)).isEqualTo(501);
    assertThat(BACKOFF.jittered(1_000, 0.999)).isEqualTo(1_000);
    assertThat(jittered.initial()).isEqualTo(BACKOFF.initial());
    assertThat(jittered.max()).isEqualTo(BACKOFF.max());
  }

  @Test
  void badParametersAreRefused() {
    assertThatThrownBy(() -> BACKOFF.withJitter(1.5)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1.5");
    assertThatThrownBy(() -> BACKOFF.withJitter(-0.1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BACKOFF.withJitter(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofMillis(-1), Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Backoff.exponential(Duration.ZERO, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(BACKOFF.withJitter(0).jitter()).isZero();
    assertThat(BACKOFF.withJitter(1).jitter()).isEqualTo(1.0);
  }
}
