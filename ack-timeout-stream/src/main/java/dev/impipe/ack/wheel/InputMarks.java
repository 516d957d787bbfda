package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.InputLag;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.LongConsumer;

/**
 * Up to which time a task's two inputs (deliveries, ACKs) are known to have been read: the wheel expires a slot only
 * once this horizon has passed its end, so an ACK produced before its deadline but still in the backlog is read
 * first, even while fresh deliveries are read ahead of it. Pure: the processor tells it what it read and what the
 * broker said the inputs' end offsets are.
 *
 * <p>When the end offsets and the consumer's positions tell for both inputs whether records are unprocessed
 * ({@link InputLag}): every slot-boundary round notes the end offsets with its wall time (a mark), and the horizon is
 * the time of the newest mark both inputs have been processed up to (never more than the grace behind the wall
 * clock while an input behind a mark processes nothing; one being processed holds it however far behind): every
 * record written before it has been processed, however fresh or old the records look. Otherwise, by
 * record times, for each input: the wall clock while the input is caught up (a record was read just now, and the
 * last record of every active input was read within the tolerance of being produced) or idle (no record of either
 * for the idle time); while one lags (a backlog), the smaller of the active inputs' newest record times (an input
 * idle for that long is left out), but never more than the grace behind the wall clock.
 *
 * <p>This used to follow the ACKs alone, idle after one tolerance (1 s) without an ACK: under load a stream thread
 * that paused a second between two ACKs of a lagging task (a commit, its other tasks) took the backlog for silence
 * and fired every overdue slot by the wall clock with the ACKs still unread (the push benchmark: 25,037 timeouts,
 * every one for a seq its device had ACKed at once, emitted 4 s after the deadline at the median, up to 35 s).
 */
final class InputMarks {

  private final long graceMs;
  private final long toleranceMs;
  private final long idleMs;
  /** Told each wait of a tolerance or more (see {@link #read}). */
  private final LongConsumer waited;
  private final InputClock deliveries = new InputClock();
  private final InputClock acks = new InputClock();
  /** End offsets noted by the rounds, oldest first, until both inputs are processed up to them. */
  private final ArrayDeque<Mark> marks = new ArrayDeque<>();
  /** The time of the newest mark both inputs have been processed up to. */
  private long readUpTo = Long.MIN_VALUE;
  /** What the last round's ends told for each input (see {@link #marked()}). */
  private OptionalLong deliveriesState = OptionalLong.empty();
  private OptionalLong acksState = OptionalLong.empty();

  InputMarks(long graceMs, long toleranceMs, long idleMs, LongConsumer waited) {
    this.graceMs = graceMs;
    this.toleranceMs = toleranceMs;
    this.idleMs = idleMs;
    this.waited = waited;
  }

  /** The task starts at wall time {@code now}: neither input has been read. */
  void start(long now) {
    deliveries.wall = now;
    acks.wall = now;
  }

  /** A delivery record of time {@code timestamp} at {@code offset} was processed at wall time {@code now}. */
  void deliveryRead(long now, long timestamp, long offset) {
    read(deliveries, now, timestamp, offset);
  }

  /** An ACK record of time {@code timestamp} at {@code offset} was processed at wall time {@code now}. */
  void ackRead(long now, long timestamp, long offset) {
    read(acks, now, timestamp, offset);
  }

  /**
   * Notes a record read, and tells {@link #waited} how long the input went without one while this record was already
   * written (it is older than the input's previous read, or than the task's start), when that was a tolerance or
   * more: the time a busy stream thread left the input's records waiting. The marks' grace must stay well above it,
   * or the grace takes a waiting input for a stuck one.
   */
  private void read(InputClock input, long now, long timestamp, long offset) {
    long wait = now - input.wall;
    if (timestamp <= input.wall && wait >= toleranceMs) {
      waited.accept(wait);
    }
    input.read(now, timestamp, offset);
  }

  /**
   * A slot-boundary round at {@code now} learnt the inputs' ends (empty: not known): notes a mark if both tell, and
   * drops the marks older than the grace (the grace bounds the horizon anyway). A round in which one does not tell
   * changes nothing while a noted mark is not reached yet.
   */
  void ends(long now, Optional<InputLag.Ends> deliveryEnds, Optional<InputLag.Ends> ackEnds) {
    OptionalLong deliveriesNow = deliveries.state(deliveryEnds);
    OptionalLong acksNow = acks.state(ackEnds);
    if ((deliveriesNow.isEmpty() || acksNow.isEmpty()) && marked() && !marks.isEmpty()) {
      // A round that cannot tell (the end offsets not answered within their timeout under load, records waiting in
      // the task) goes on waiting for the marks not reached yet: the record times' rule would let the grace fire
      // slots whose ACKs wait in the backlog those marks know of.
      return;
    }
    deliveriesState = deliveriesNow;
    acksState = acksNow;
    if (marked()) {
      marks.addLast(new Mark(now, deliveryEnds.get().end(), ackEnds.get().end()));
    }
    while (!marks.isEmpty() && marks.peekFirst().time() < now - graceMs) {
      marks.pollFirst();
    }
  }

  /** The horizon at wall time {@code now}, from the ends noted so far and what has been processed since. */
  long horizon(long now) {
    if (marked()) {
      while (!marks.isEmpty() && marks.peekFirst().processedBy(deliveries.offset, acks.offset)) {
        readUpTo = Math.max(readUpTo, marks.pollFirst().time());
      }
      return stalled(now) ? Math.max(readUpTo, now - graceMs) : readUpTo;
    }
    boolean deliveriesHold = holdsBack(deliveriesState, deliveries, now);
    boolean acksHold = holdsBack(acksState, acks, now);
    boolean current = (deliveriesHold && now - deliveries.wall < toleranceMs)
        || (acksHold && now - acks.wall < toleranceMs);
    if (!deliveriesHold && !acksHold || current && (!deliveriesHold || deliveries.lag <= toleranceMs)
        && (!acksHold || acks.lag <= toleranceMs)) {
      return now;
    }
    // A watermark: each input still active has been read up to its newest record time, so both up to the smaller.
    long watermark = Math.min(deliveriesHold ? deliveries.time : Long.MAX_VALUE,
        acksHold ? acks.time : Long.MAX_VALUE);
    return Math.max(watermark, now - graceMs);
  }

  /**
   * Whether the grace applies to the marks: an input not processed up to the oldest mark has processed nothing for
   * the grace (stuck), or every mark is reached (then the horizon is recent anyway). An input being processed holds
   * due slots however far behind it is: firing them would time out seqs whose ACKs wait in its backlog, and under a
   * sustained overload every such false timeout asks for a redelivery, more load (the push benchmark's warm-up:
   * 19,220 timeouts for ACKed seqs once the wheel's lag passed the grace).
   */
  private boolean stalled(long now) {
    Mark oldest = marks.peekFirst();
    if (oldest == null) {
      return true;
    }
    boolean deliveriesBehind = deliveries.offset + 1 < oldest.deliveriesEnd();
    boolean acksBehind = acks.offset + 1 < oldest.acksEnd();
    return deliveriesBehind && now - deliveries.wall >= graceMs || acksBehind && now - acks.wall >= graceMs;
  }

  /** Whether a noted mark is not reached yet: due slots wait for the inputs to be processed that far. */
  boolean waiting() {
    return marked() && !marks.isEmpty();
  }

  /** Whether the last round's ends told for both inputs: then the marks decide the horizon. */
  private boolean marked() {
    return deliveriesState.isPresent() && acksState.isPresent();
  }

  /**
   * Whether an input may still hold records older than the wall clock: when the broker and the consumer can tell,
   * records not processed yet always hold the horizon back, however long nothing was read (a busy thread is not a
   * quiet input), and an input whose every record is processed holds nothing back (no idle wait after the load
   * stops); otherwise an input holds back while read within the idle time.
   */
  private boolean holdsBack(OptionalLong unprocessed, InputClock input, long now) {
    if (unprocessed.isPresent()) {
      return unprocessed.getAsLong() > 0;
    }
    return now - input.wall < idleMs;
  }

  /** End offsets of both inputs asked at wall time {@code time}. */
  private record Mark(long time, long deliveriesEnd, long acksEnd) {
    /** Whether both inputs are processed up to these ends: every record written before {@code time} is. */
    boolean processedBy(long deliveriesOffset, long acksOffset) {
      return deliveriesOffset + 1 >= deliveriesEnd && acksOffset + 1 >= acksEnd;
    }
  }

  /** How far one input has been read. */
  private static final class InputClock {
    /** Newest record time read; MIN_VALUE before the first. */
    long time = Long.MIN_VALUE;
    /** Wall time of the last record read, or the task's start. */
    long wall;
    /** How far behind the wall clock the last record read was. */
    long lag = Long.MAX_VALUE;
    /** Offset of the last record processed in this task; -1 before the first. */
    long offset = -1;

    void read(long now, long timestamp, long offset) {
      this.offset = offset;
      wall = now;
      lag = now - timestamp;
      time = Math.max(time, timestamp);
    }

    /**
     * Records not processed yet, from the input's end offset and the consumer's position: 0 when processed up to the
     * end, the records between position and end when the consumer has not handed them over (not fetched, or waiting
     * in its buffer), empty when it cannot tell (records fetched but waiting in the task, a transaction marker at
     * the end, nothing processed in this task yet, or the ends not known).
     */
    OptionalLong state(Optional<InputLag.Ends> ends) {
      if (ends.isEmpty()) {
        return OptionalLong.empty();
      }
      long end = ends.get().end();
      if (offset + 1 >= end) {
        return OptionalLong.of(0);
      }
      long position = ends.get().position();
      return position < end ? OptionalLong.of(end - position) : OptionalLong.empty();
    }
  }
}
