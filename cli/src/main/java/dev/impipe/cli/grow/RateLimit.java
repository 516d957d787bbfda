package dev.impipe.cli.grow;

/**
 * {@code --max-rate}: how long to wait before the next batch so the copy stays under a rate (records per second)
 * on a cluster that is also serving. Pure: the caller gives the time and sleeps.
 */
public final class RateLimit {

  private final long recordsPerSecond;
  private final long startNanos;
  private long sent;

  /** {@code recordsPerSecond <= 0}: unlimited. */
  public RateLimit(long recordsPerSecond, long startNanos) {
    this.recordsPerSecond = recordsPerSecond;
    this.startNanos = startNanos;
  }

  /** Counts {@code records} as sent; returns the nanoseconds to wait at {@code nowNanos} to stay under the rate. */
  public long sent(long records, long nowNanos) {
    sent += records;
    if (recordsPerSecond <= 0) {
      return 0;
    }
    long due = startNanos + sent * 1_000_000_000L / recordsPerSecond;
    return Math.max(0, due - nowNanos);
  }
}
