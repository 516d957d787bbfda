package dev.impipe.edge.quota;

/**
 * One user's tokens of one {@link Rate}, on a monotonic nanosecond clock, kept as the one instant at which the bucket
 * is full again (the generic cell rate algorithm: the same answers as a token bucket, in exact integer arithmetic).
 * Not thread-safe: {@link RateQuota} guards it. A new bucket is full.
 */
final class TokenBucket {

  /** When the bucket is full again; each token taken moves it one interval later. */
  private long fullAtNanos;

  TokenBucket(long nowNanos) {
    this.fullAtNanos = nowNanos;
  }

  /** Takes one token: 0 when taken, else the nanoseconds until one is there (nothing taken). */
  long tryTake(Rate rate, long nowNanos) {
    // Differences only: System.nanoTime() may be anywhere, even about to wrap.
    long ahead = Math.max(0, fullAtNanos - nowNanos) + rate.intervalNanos();
    long over = ahead - rate.capacityNanos();
    if (over > 0) {
      return over;
    }
    fullAtNanos = nowNanos + ahead;
    return 0;
  }

  /** Gives back one token taken by {@link #tryTake} (a request refused by another quota after all). */
  void refund(Rate rate) {
    fullAtNanos -= rate.intervalNanos();
  }

  /** True when the bucket is full at {@code nowNanos}: forgetting it then changes nothing. */
  boolean full(long nowNanos) {
    return fullAtNanos - nowNanos <= 0;
  }
}
