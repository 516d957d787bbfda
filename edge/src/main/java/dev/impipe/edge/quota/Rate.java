package dev.impipe.edge.quota;

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
  }

  /** {@code amount} per {@code period} (named {@code periodName}: "second", "day"), bursts of {@code burst}. */
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

  /** Nanoseconds an empty bucket takes to fill up; at most about 36 years, so sums of them cannot overflow. */
  long capacityNanos() {
    long most = Long.MAX_VALUE / 8;
    return intervalNanos > 0 && burst > most / intervalNanos ? most : intervalNanos * burst;
  }
}
