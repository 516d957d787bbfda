package dev.impipe.notify.send;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.notify.provider.SendOutcome;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class OutcomePolicyTest {

  // Given at most 4 sends, a 1 s back-off and Retry-After honoured up to 30 s
  final OutcomePolicy policy = new OutcomePolicy(4, Duration.ofSeconds(1), Duration.ofSeconds(30));

  @Test
  void deliveredIsDone() {
    assertThat(policy.decide(new SendOutcome.Delivered(201), 1)).isEqualTo(new Step.Done());
  }

  @Test
  void goneRemovesTheRegistrationWithTheProvidersReason() {
    assertThat(policy.decide(new SendOutcome.Gone(410, "HTTP 410"), 1))
        .isEqualTo(new Step.RemoveRegistration("HTTP 410"));
  }

  @Test
  void failedIsRejectedAtOnce() {
    assertThat(policy.decide(new SendOutcome.Failed(400, "HTTP 400: bad"), 1))
        .isEqualTo(new Step.Reject(OutcomePolicy.FAILED, "HTTP 400: bad"));
  }

  @Test
  void aRetryWaitsForRetryAfterCappedAtTheMaximum() {
    assertThat(policy.decide(retry(Duration.ofSeconds(3)), 1)).isEqualTo(new Step.RetryIn(Duration.ofSeconds(3)));
    assertThat(policy.decide(retry(Duration.ofSeconds(30)), 1)).isEqualTo(new Step.RetryIn(Duration.ofSeconds(30)));
    assertThat(policy.decide(retry(Duration.ofHours(2)), 2)).isEqualTo(new Step.RetryIn(Duration.ofSeconds(30)));
  }

  @Test
  void withoutRetryAfterTheBackOffDoublesPerAttemptUpToTheMaximum() {
    assertThat(policy.retryDelay(Optional.empty(), 1)).isEqualTo(Duration.ofSeconds(1));
    assertThat(policy.retryDelay(Optional.empty(), 2)).isEqualTo(Duration.ofSeconds(2));
    assertThat(policy.retryDelay(Optional.empty(), 3)).isEqualTo(Duration.ofSeconds(4));
    assertThat(policy.retryDelay(Optional.empty(), 6)).isEqualTo(Duration.ofSeconds(30));
    assertThat(policy.retryDelay(Optional.empty(), 1000)).isEqualTo(Duration.ofSeconds(30));
    assertThat(policy.retryDelay(Optional.empty(), 0)).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void theLastAllowedAttemptIsRejectedNotRetried() {
    assertThat(policy.decide(retry(Duration.ofSeconds(1)), 3)).isInstanceOf(Step.RetryIn.class);
    assertThat(policy.decide(new SendOutcome.Retry(503, "HTTP 503", Optional.empty()), 4))
        .isEqualTo(new Step.Reject(OutcomePolicy.GAVE_UP, "gave up after 4 attempts: HTTP 503"));
  }

  @Test
  void oneAttemptMeansNoRetry() {
    OutcomePolicy once = new OutcomePolicy(1, Duration.ofSeconds(1), Duration.ofSeconds(1));
    assertThat(once.decide(retry(Duration.ZERO), 1)).isInstanceOf(Step.Reject.class);
    assertThatThrownBy(() -> new OutcomePolicy(0, Duration.ofSeconds(1), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  static SendOutcome retry(Duration after) {
    return new SendOutcome.Retry(429, "HTTP 429", Optional.of(after));
  }
}
