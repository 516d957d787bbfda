package dev.impipe.runtime;

import java.time.Duration;

/**
 * How long to wait before the next attempt: exponential from {@code initial}, doubling per failed attempt, capped at
 * {@code max}, less an optional random fraction ({@code jitter}, 0 to 1) so that many callers failing together do
 * not retry together. Pure: the caller keeps the state (the last delay or the attempt count), does the waiting and
 * supplies the random number, so every retry loop of the pipeline shares one tested rule.
 */
public record Backoff(Duration initial, Duration max, double jitter) {

  /** Doublings beyond this are the cap anyway (and {@code 1L << 31} times a delay would overflow). */
  private static final int MAX_DOUBLINGS = 30;

  public Backoff {
    if (initial.isNegative() || max.isNegative()) {
      throw new IllegalArgumentException("back-off delays must not be negative: " + initial + ", " + max);
    }
    if (!(jitter >= 0 && jitter <= 1)) {
      throw new IllegalArgumentException("jitter must be between 0 and 1: " + jitter);
    }
  }

  /** Exponential from {@code initial} up to {@code max}, without jitter. */
  public static Backoff exponential(Duration initial, Duration max) {
    return new Backoff(initial, max, 0);
  }

  /** The same pause every time (polling for a condition, bounded by the caller's deadline). */
  public static Backoff fixed(Duration every) {
    return exponential(every, every);
  }

  /** This back-off with a random reduction of up to {@code fraction} of each delay. */
  public Backoff withJitter(double fraction) {
    return new Backoff(initial, max, fraction);
  }

  /** The delay before attempt {@code attempts + 1}: {@code initial * 2^(attempts-1)}, at most {@code max}. */
  public Duration delay(int attempts) {
    int doublings = Math.min(Math.max(attempts - 1, 0), MAX_DOUBLINGS);
    return min(initial.multipliedBy(1L << doublings), max);
  }

  /**
   * The delay after one of {@code previousMs} (0 or less: none yet): twice it, at least {@code initial}, at most
   * {@code max}. For loops that keep their last delay and reset it to 0 on success.
   */
  public long nextMs(long previousMs) {
    long doubled = previousMs > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : previousMs * 2;
    return Math.min(max.toMillis(), Math.max(initial.toMillis(), doubled));
  }

  /** {@code delayMs} less {@code jitter * random} of it; {@code random} is a uniform draw in [0, 1). */
  public long jittered(long delayMs, double random) {
    return delayMs - (long) (delayMs * jitter * random);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
