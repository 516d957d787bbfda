package dev.impipe.delay.internal;

import java.util.function.LongSupplier;

/**
 * What the delay punctuations of one stream thread may still do before the thread commits. All tasks of a thread
 * punctuate inside one exactly-once transaction, so a bound per task (batch x partitions) is no bound on the
 * transaction: this one is shared by every task of the thread (one instance per thread, see
 * {@code DelayTopology}), counting records delivered and time spent delivering.
 *
 * <p>A round ends when either limit is reached; the sweep that reaches it asks for a commit. The next round starts
 * only when no sweep has worked for {@code gapMs} (the drain tick): the punctuations of one poll loop run back to
 * back, so they all belong to the round, and the commit asked for runs after them.
 */
public final class SweepBudget {

  private final int records;
  private final long timeNanos;
  private final long gapMs;
  private final LongSupplier nanoClock;

  private int used;
  private long spentNanos;
  private long lastWorkEndMs = Long.MIN_VALUE / 2;

  /**
   * @param records most records delivered per round
   * @param timeMs most time spent delivering per round
   * @param gapMs how long no sweep must have worked before a new round starts
   * @param nanoClock a monotonic clock ({@code System::nanoTime} in production)
   */
  public SweepBudget(int records, long timeMs, long gapMs, LongSupplier nanoClock) {
    this.records = records;
    this.timeNanos = timeMs * 1_000_000L;
    this.gapMs = gapMs;
    this.nanoClock = nanoClock;
  }

  /** How many records a sweep starting at wall-clock {@code nowMs} may deliver (0: wait for the next round). */
  public int allowance(long nowMs) {
    if (nowMs >= lastWorkEndMs + gapMs) {
      used = 0;
      spentNanos = 0;
    }
    return spentNanos >= timeNanos ? 0 : Math.max(0, records - used);
  }

  /** The time a sweep began, to pass to {@link #timeLeft} and {@link #spent}. */
  public long start() {
    return nanoClock.getAsLong();
  }

  /** Whether the round still has time, for a sweep that began at {@code startNanos}. */
  public boolean timeLeft(long startNanos) {
    return spentNanos + (nanoClock.getAsLong() - startNanos) < timeNanos;
  }

  /**
   * A sweep that began at {@code startNanos} delivered {@code delivered} records and ended at {@code nowMs}; true if
   * it used the round up (the caller asks for a commit).
   */
  public boolean spent(long startNanos, int delivered, long nowMs) {
    used += delivered;
    spentNanos += nanoClock.getAsLong() - startNanos;
    lastWorkEndMs = nowMs;
    return used >= records || spentNanos >= timeNanos;
  }
}
