package dev.impipe.notify.decide;

/**
 * How far a task's inputs have been read, so a burst is decided only once the ACKs and cursors that could cancel it
 * had their chance to be processed: while records arrive, the due times up to the newest record time read (stream
 * time: Kafka Streams hands a task's records over in time order across its partitions); once nothing has arrived for
 * {@code idleMs}, the inputs are taken as read to the end and the wall clock applies. After a restart with a backlog
 * this holds decisions back until the backlog has been read past them, instead of notifying devices whose ACKs are
 * still waiting in {@code im.acks}; in steady state it delays a decision by the input's latency at most.
 */
final class InputHorizon {

  private final long idleMs;
  /** Newest record time read; MIN_VALUE before the first. */
  private long streamTime = Long.MIN_VALUE;
  /** Wall time of the last record read, or of the start. */
  private long lastRead;

  InputHorizon(long idleMs, long startedAt) {
    this.idleMs = idleMs;
    this.lastRead = startedAt;
  }

  /** A record of time {@code timestamp} was read at wall time {@code now}. */
  void read(long now, long timestamp) {
    lastRead = now;
    streamTime = Math.max(streamTime, timestamp);
  }

  /** The latest due time that may be decided at wall time {@code now}. */
  long at(long now) {
    return now - lastRead >= idleMs ? now : Math.min(now, streamTime);
  }

  /** The idle time for {@code afterMs}: a second, or half of it when that is shorter. */
  static long idleMs(long afterMs) {
    return Math.max(1, Math.min(1_000, afterMs / 2));
  }
}
