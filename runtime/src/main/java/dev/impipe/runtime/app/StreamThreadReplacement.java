package dev.impipe.runtime.app;

import dev.impipe.runtime.config.Setting;
import java.time.Duration;
import java.util.Map;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.LongSupplier;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The uncaught exception handler of one Streams app: a dead stream thread is replaced, at most {@code max} times
 * within {@code window}; the next death in that window shuts the client down (this instance's app goes to ERROR,
 * and {@code /health} reports it DOWN), because a failure that keeps coming back is a bug or a lasting outage that a
 * fresh thread only repeats, reprocessing the same records each time. Bad input never gets here: it is dead-lettered
 * ({@link DeadLetterProcessingExceptionHandler}).
 */
public final class StreamThreadReplacement implements StreamsUncaughtExceptionHandler {

  /** How many thread replacements {@link #IM_STREAM_THREAD_REPLACEMENT_WINDOW} allows (default 3, 0: never). */
  public static final String IM_STREAM_THREAD_REPLACEMENTS = "IM_STREAM_THREAD_REPLACEMENTS";
  /** The window of {@link #IM_STREAM_THREAD_REPLACEMENTS} (default 10m). */
  public static final String IM_STREAM_THREAD_REPLACEMENT_WINDOW = "IM_STREAM_THREAD_REPLACEMENT_WINDOW";
  public static final int DEFAULT_MAX = 3;
  public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(10);

  public static final Setting<Integer> REPLACEMENTS = Setting.integer(IM_STREAM_THREAD_REPLACEMENTS, DEFAULT_MAX, 0,
      1000, "dead stream threads an app replaces within the window below; one more shuts the app down on this "
          + "instance (see Rejected records)");
  public static final Setting<Duration> WINDOW = Setting.duration(IM_STREAM_THREAD_REPLACEMENT_WINDOW, "10m", "1s",
      "1d", "the window of `IM_STREAM_THREAD_REPLACEMENTS`");

  /** The handler of app {@code name}, its bound read from {@code env} (README "Rejected records"). */
  public static StreamThreadReplacement fromEnv(String name, Map<String, String> env) {
    return new StreamThreadReplacement(name, REPLACEMENTS.read(env), WINDOW.read(env),
        () -> System.nanoTime() / 1_000_000);
  }

  private static final Logger LOG = LoggerFactory.getLogger(StreamThreadReplacement.class);

  private final String app;
  private final int max;
  private final long windowMs;
  private final LongSupplier clockMs;
  /** When the replacements within the window were made, oldest first. */
  private final Deque<Long> replaced = new ArrayDeque<>();

  /** {@code clockMs}: a monotonic clock in milliseconds. */
  public StreamThreadReplacement(String app, int max, Duration window, LongSupplier clockMs) {
    if (max < 0 || window.isNegative() || window.isZero()) {
      throw new IllegalArgumentException("replacements must not be negative and the window positive");
    }
    this.app = app;
    this.max = max;
    this.windowMs = window.toMillis();
    this.clockMs = clockMs;
  }

  @Override
  public synchronized StreamThreadExceptionResponse handle(Throwable exception) {
    long now = clockMs.getAsLong();
    while (!replaced.isEmpty() && replaced.peekFirst() <= now - windowMs) {
      replaced.removeFirst();
    }
    if (replaced.size() < max) {
      replaced.addLast(now);
      LOG.error("Stream thread of {} died; replacing it ({} of at most {} replacements within {})", app,
          replaced.size(), max, Duration.ofMillis(windowMs), exception);
      return StreamThreadExceptionResponse.REPLACE_THREAD;
    }
    LOG.error("Stream thread of {} died after {} replacements within {}: not replacing it again, shutting {} down on "
        + "this instance (a failure that keeps coming back is a bug or a lasting outage; restart the instance once "
        + "it is fixed)", app, replaced.size(), Duration.ofMillis(windowMs), app, exception);
    return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
  }
}
