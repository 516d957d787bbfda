package dev.impipe.notify.send;

import dev.impipe.notify.provider.SendOutcome;
import dev.impipe.runtime.Backoff;
import java.time.Duration;
import java.util.Optional;

/**
 * What follows a provider's answer: delivered is done, gone removes the registration, a retryable answer is sent again
 * after its {@code Retry-After} (at most {@code maxRetryAfter}) or an exponential back-off, at most
 * {@code maxAttempts} sends in all, then rejected like a failure.
 */
public record OutcomePolicy(int maxAttempts, Duration backoff, Duration maxRetryAfter) {

  /** Rejection code: the provider refused the notification for good (a 4xx other than 404/410/429). */
  public static final String FAILED = "NOTIFY_FAILED";
  /** Rejection code: still not accepted after {@code IM_NOTIFY_MAX_ATTEMPTS} sends. */
  public static final String GAVE_UP = "NOTIFY_GAVE_UP";
  /** Rejection code: the notification's provider is not enabled in this deployment. */
  public static final String PROVIDER_OFF = "NOTIFY_PROVIDER_OFF";

  public OutcomePolicy {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1");
    }
  }

  /**
   * @param attempts sends made so far, the one answered by {@code outcome} included (1 for the first)
   */
  public Step decide(SendOutcome outcome, int attempts) {
    if (outcome instanceof SendOutcome.Delivered) {
      return new Step.Done();
    }
    if (outcome instanceof SendOutcome.Gone) {
      return new Step.RemoveRegistration(outcome.reason());
    }
    if (outcome instanceof SendOutcome.Retry r) {
      return attempts >= maxAttempts
          ? new Step.Reject(GAVE_UP, "gave up after " + attempts + " attempts: " + r.reason())
          : new Step.RetryIn(retryDelay(r.retryAfter(), attempts));
    }
    return new Step.Reject(FAILED, outcome.reason());
  }

  /** The provider's {@code Retry-After} capped at {@code maxRetryAfter}, else {@code backoff * 2^(attempts-1)}. */
  public Duration retryDelay(Optional<Duration> retryAfter, int attempts) {
    if (retryAfter.isPresent()) {
      return min(retryAfter.get(), maxRetryAfter);
    }
    return Backoff.exponential(backoff, maxRetryAfter).delay(attempts);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
