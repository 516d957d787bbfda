package dev.impipe.ingest.quota;

import java.time.Duration;

/**
 * How fast one user may do one kind of thing: {@code burst} at once, then one per {@code intervalNanos}.
 *
 * @param intervalNanos nanoseconds per token, 0 = unlimited
 * @param burst most tokens a user holds (what an idle user may do at once)
 * @param text the rule as a user reads it in a refusal, e.g. "20 per second (bursts of 40)"
 */
public record Rate(long intervalNanos, int burst, String text) {

  public Rate {
    if (intervalNanos < 0 || burst < 1) {
      throw new IllegalArgumentException("interval must not be negative and burst at least 1");
    }
    if (intervalNanos > 0 && burst > Long.MAX_VALUE / 2 / intervalNanos) {
      throw new IllegalArgumentException("burst " + burst + " of one per " + intervalNanos + " ns is too long");
    }
  }

  /** {@code amount} per {@code period} (named {@code periodName}: "second", "hour"), bursts of {@code burst}. */
  public static Rate of(int amount, Duration period, String periodName, int burst) {
    if (amount < 0) {
      throw new IllegalArgumentException("amount must not be negative");
    }
    long interval = amount == 0 ? 0 : Math.max(1, period.toNanos() / amount);
    return new Rate(interval, burst, amount + " per " + periodName + " (bursts of " + burst + ")");
  }

  /** True when nothing is limited. */
  public boolean unlimited() {
    return intervalNanos == 0;
  }

  /** Nanoseconds an empty bucket takes to fill up. */
  long capacityNanos() {
    return intervalNanos * burst;
  }
}
