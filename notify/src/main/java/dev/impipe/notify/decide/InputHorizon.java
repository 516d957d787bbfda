package dev.impipe.notify.decide;

/**
 * How far a task's inputs have been read, so a burst is decided only once the ACKs and cursors that could cancel it
 * had their chance to be processed: while records arrive, the due times up to the newest record time read (stream
 * time: Kafka Streams hands a task's records over in time order across its partitions); once nothing has arrived for
 * {@code idleMs}, the inputs are taken as read to the end and the wall clock applies.
 *
 * <p>Idle is not read to the end right after a start: a restarted task's first fetch of its backlog can take longer
 * than {@code idleMs} (a loaded machine, a slow broker), and a burst restored from the changelog would be decided
 * although the ACK that cancels it waits in the unfetched backlog. So the idle rule applies only once the task has
 * fetched its inputs up to their end offsets at the start ({@link #backlogFetched}), or {@value #BACKLOG_WAIT_MS} ms
 * after the start when that cannot be known. In steady state it delays a decision by the input's latency at most.
 */
final class InputHorizon {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(InputHorizon.class);

  /** How long after a start the idle rule waits for the backlog at most, when its end offsets cannot be known. */
  static final long BACKLOG_WAIT_MS = 60_000;

  private final long idleMs;
  private final long startedAt;
  /** Newest record time read; MIN_VALUE before the first. */
  private long streamTime = Long.MIN_VALUE;
  /** Wall time of the last record read, or of the start. */
  private long lastRead;
  private boolean backlogFetched;

  InputHorizon(long idleMs, long startedAt) {
    this.idleMs = idleMs;
    this.startedAt = startedAt;
    this.lastRead = startedAt;
  }

  /** A record of time {@code timestamp} was read at wall time {@code now}. */
  void read(long now, long timestamp) {
    lastRead = now;
    streamTime = Math.max(streamTime, timestamp);
  }

  /** Whether, at wall time {@code now}, the idle rule still waits to learn that the start's backlog is fetched. */
  boolean awaitingBacklog(long now) {
    return !backlogFetched && now - startedAt < BACKLOG_WAIT_MS;
  }

  /** Task {@code task} has fetched every input up to its end offset at the start (or later), at wall time {@code now}. */
  void backlogFetched(String task, long now) {
    backlogFetched = true;
    LOG.info("Task {}: inputs fetched up to their end offsets at its start, {} ms after it", task, now - startedAt);
  }

  /** The wall time of the start. */
  long startedAt() {
    return startedAt;
  }

  /** The latest due time that may be decided at wall time {@code now}. */
  long at(long now) {
    boolean idle = now - lastRead >= idleMs && !awaitingBacklog(now);
    return idle ? now : Math.min(now, streamTime);
  }

  /** The idle time for {@code afterMs}: a second, or half of it when that is shorter. */
  static long idleMs(long afterMs) {
    return Math.max(1, Math.min(1_000, afterMs / 2));
  }
}
