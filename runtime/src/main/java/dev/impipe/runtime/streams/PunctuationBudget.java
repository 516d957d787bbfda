package dev.impipe.runtime.streams;

import java.util.function.LongSupplier;

/**
 * How much work the punctuations of one stream thread may do per commit window, shared by every task of the thread.
 *
 * <p>Under exactly-once a stream thread punctuates all its tasks back to back and commits them in one transaction,
 * so a bound per task (or per punctuation) multiplies by the tasks on the thread: a retention sweep of 100k deletes
 * per task on 12 tasks is millions of changelog records in one transaction, past {@code transaction.timeout.ms},
 * fenced, restored, swept again: a livelock. A budget bounds the records written and the time spent by all
 * punctuations of a thread within one window (the commit interval): work that does not fit waits for the next
 * window (callers reschedule a short catch-up punctuation), so a transaction carries at most about one budget of
 * punctuation records however large the backlog is.
 *
 * <p>Usage: {@code try (Lease l = budget.lease(now)) { while (more && l.take(writes)) {...} }}. One instance per
 * kind of work, shared by the processors of an app (a {@link ThreadLocal} keeps one window per thread).
 */
public final class PunctuationBudget {

  /** Default window: the exactly-once commit interval of Kafka Streams. */
  public static final long DEFAULT_WINDOW_MS = 100;

  private final long maxRecords;
  private final long maxNanos;
  private final long windowMs;
  private final LongSupplier nanoClock;
  private final ThreadLocal<Window> windows = ThreadLocal.withInitial(Window::new);

  /**
   * @param maxRecords records (changelog writes and forwards) per thread per window, at least 1
   * @param maxMillis time spent in leases per thread per window, at least 1
   * @param windowMs window length in punctuation time (the {@code now} each punctuation gets)
   */
  public PunctuationBudget(long maxRecords, long maxMillis, long windowMs) {
    this(maxRecords, maxMillis, windowMs, System::nanoTime);
  }

  PunctuationBudget(long maxRecords, long maxMillis, long windowMs, LongSupplier nanoClock) {
    if (maxRecords < 1 || maxMillis < 1 || windowMs < 1) {
      throw new IllegalArgumentException("a punctuation budget needs records, time and a window >= 1, not "
          + maxRecords + "/" + maxMillis + "ms/" + windowMs + "ms");
    }
    this.maxRecords = maxRecords;
    this.maxNanos = maxMillis * 1_000_000L;
    this.windowMs = windowMs;
    this.nanoClock = nanoClock;
  }

  public long maxRecords() {
    return maxRecords;
  }

  /** Starts spending this thread's budget in the window of punctuation time {@code nowMs}. */
  public Lease lease(long nowMs) {
    Window w = windows.get();
    if (w.start == Long.MIN_VALUE || nowMs - w.start >= windowMs || nowMs < w.start) {
      w.start = nowMs;
      w.records = 0;
      w.nanos = 0;
    }
    return new Lease(w, nanoClock.getAsLong());
  }

  /** Records this thread may still write in its current window (tests, metrics). */
  public long remainingRecords() {
    Window w = windows.get();
    return w.start == Long.MIN_VALUE ? maxRecords : Math.max(0, maxRecords - w.records);
  }

  private static final class Window {
    long start = Long.MIN_VALUE;
    long records;
    long nanos;
  }

  /** A punctuation's share of the thread's window; close it when the punctuation ends. */
  public final class Lease implements AutoCloseable {
    private final Window window;
    private final long startNanos;
    private boolean exhausted;
    private boolean took;
    private boolean closed;

    private Lease(Window window, long startNanos) {
      this.window = window;
      this.startNanos = startNanos;
    }

    /**
     * Takes {@code records} from the budget: true if they fit (the caller does the work), false if the records or
     * the time of the window are used up (the caller stops and resumes in a later punctuation). The first take of
     * a lease is not refused for time (only for records): whatever a punctuation spends before its first unit of
     * work (opening an iterator), each one makes progress.
     */
    public boolean take(long records) {
      if (exhausted || closed) {
        return false;
      }
      long spent = window.nanos + (nanoClock.getAsLong() - startNanos);
      if (window.records + records > maxRecords || (took && spent >= maxNanos)) {
        exhausted = true;
        return false;
      }
      took = true;
      window.records += records;
      return true;
    }

    /** Whether a {@link #take} was refused: work is left for a later punctuation. */
    public boolean exhausted() {
      return exhausted;
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        window.nanos += nanoClock.getAsLong() - startNanos;
      }
    }
  }
}
