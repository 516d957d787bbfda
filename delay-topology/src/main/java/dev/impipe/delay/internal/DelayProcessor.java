package dev.impipe.delay.internal;

import dev.impipe.avro.ScheduleCommand;
import dev.impipe.delay.DelayConfig;
import dev.impipe.delay.DelayMetrics;
import dev.impipe.delay.TargetTopics;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Files SCHEDULE commands under their due time, removes them on CANCEL, and on a wall-clock punctuator forwards
 * what is due — oldest first, within the stream thread's {@link SweepBudget} — and records how far it got. Forward
 * and position are in the same exactly-once transaction, so a crash delivers neither twice nor never.
 *
 * <p>One write per delivery: the schedule and index stores are segmented by due time (window stores), a delivered
 * entry is not deleted but left behind the sweep {@link ScheduleCodec.Position position}, which is written once per
 * punctuation that moved it (in both stores, filed at its segment + {@link ScheduleRules#STORE_RETENTION_MS}). Kafka
 * Streams drops every segment older than the position's segment whole, locally and on restore, without a tombstone
 * per record; the changelog's time retention drops them on the broker. An entry below the position counts as gone
 * for CANCEL and replace, so the index stays exact.
 *
 * <p>{@link ScheduleCodec.Position#resumeFrom()} is the smallest key any undelivered entry can have and
 * {@code fileFromMs} the earliest due time a new entry may be filed under. A sweep that stops at its budget
 * resumes right after the last key it delivered. Records that arrive already due are filed at {@code fileFromMs}
 * rather than their own past due time, so they are never filed behind the sweep; they keep their requested time
 * for the scheduled-at header and the lateness metric. Schedule ids must not contain NUL: the window store orders
 * its keys as id + timestamp bytes, which equals id order only without NUL bytes.
 */
public final class DelayProcessor implements Processor<byte[], byte[], byte[], Outgoing> {

  /** The {@link RejectedHeaders#SOURCE} of what the delay topology rejects. */
  public static final String SOURCE = "delay";

  /** Names of the stores the processor uses. */
  public record StoreNames(String schedule, String index) {}

  private final String inputTopic;
  private final String rejectedTopic;
  private final StoreNames stores;
  private final DelayConfig config;
  private final TargetTopics targets;
  private final DelayMetrics metrics;
  private final Deserializer<ScheduleCommand> commands;
  private final CancelRefusals refusals;
  private final Supplier<SweepBudget> budgets;

  private ProcessorContext<byte[], Outgoing> context;
  private WindowStore<Bytes, byte[]> schedule;
  private WindowStore<Bytes, byte[]> index;
  private DelayMetrics.TaskGauges gauges;
  private SweepCursor cursor;
  private Cancellable drain;

  public DelayProcessor(String inputTopic, String rejectedTopic, StoreNames stores, DelayConfig config,
      TargetTopics targets, DelayMetrics metrics, Deserializer<ScheduleCommand> commands, CancelRefusals refusals,
      Supplier<SweepBudget> budgets) {
    this.inputTopic = inputTopic;
    this.rejectedTopic = rejectedTopic;
    this.stores = stores;
    this.config = config;
    this.targets = targets;
    this.metrics = metrics;
    this.commands = commands;
    this.refusals = refusals;
    this.budgets = budgets;
  }

  @Override
  public void init(ProcessorContext<byte[], Outgoing> ctx) {
    this.context = ctx;
    this.schedule = ctx.getStateStore(stores.schedule());
    this.index = ctx.getStateStore(stores.index());
    this.gauges = metrics.task(ctx.taskId());
    // Stores are restored before init: the last committed position says where the sweep was.
    ScheduleCodec.Position stored = storedPosition();
    cursor = new SweepCursor(stored, config.segmentMs());
    if (stored != null) {
      gauges.pending(stored.pending());
    }
    ctx.schedule(Duration.ofMillis(config.tickMs()), PunctuationType.WALL_CLOCK_TIME, now -> sweep(now, true));
  }

  private ScheduleCodec.Position storedPosition() {
    try (WindowStoreIterator<byte[]> it = schedule.backwardFetch(Bytes.wrap(ScheduleCodec.POSITION_KEY), 0,
        Long.MAX_VALUE)) {
      return it.hasNext() ? ScheduleCodec.decodePosition(it.next().value) : null;
    }
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    if (record.value() == null) {
      throw reject("invalid", "no schedule command (null value)");
    }
    ScheduleCommand command;
    try {
      command = commands.deserialize(inputTopic, record.headers(), record.value());
    } catch (RuntimeException e) {
      throw reject("invalid", "undecodable schedule command: " + e.getMessage());
    }
    String id = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
    ScheduleRules.Verdict verdict = ScheduleRules.check(id, command, context.currentSystemTimeMs(),
        config.maxDelayMs(), targets::rejection);
    if (verdict instanceof ScheduleRules.Refuse refuse) {
      throw reject(refuse.category(), refuse.reason());
    }
    if (verdict instanceof ScheduleRules.Cancel cancel) {
      refuseCancelOfAnother(record, cancel.requester(), id);
      metrics.cancelled(remove(record.key()));
    } else if (verdict instanceof ScheduleRules.Schedule filed) {
      boolean replaced = remove(record.key());
      file(record.key(), filed.dueMs(), ScheduleCodec.encodeEntry(filed.entry()));
      if (!replaced) {
        gauges.pending(gauges.pending() + 1);
      }
      metrics.scheduled();
    }
  }

  /** Files {@code entry} for {@code id} at its due time, or at the cursor's file-from time if that is later. */
  private void file(byte[] id, long dueMs, byte[] entry) {
    long fileAt = ScheduleRules.fileAt(dueMs, cursor.fileFromMs());
    schedule.put(Bytes.wrap(ScheduleCodec.scheduleKey(fileAt, id)), entry, fileAt);
    index.put(Bytes.wrap(id), ScheduleCodec.indexValue(fileAt), fileAt);
  }

  /** The due time {@code id} is filed under if it is still undelivered, else null. */
  private Long pendingDue(byte[] id) {
    // Only the segments an undelivered entry can be in: filed at or after the sweep position's millisecond, at
    // most at the maximum delay from now (or at fileFromMs); not the delivered ones, not the position's own.
    long from = ScheduleCodec.dueOf(cursor.resumeFrom());
    long to = Math.max(context.currentSystemTimeMs() + config.maxDelayMs(), cursor.fileFromMs());
    try (WindowStoreIterator<byte[]> it = index.fetch(Bytes.wrap(id), from, to)) {
      while (it.hasNext()) {
        long due = ScheduleCodec.indexDue(it.next().value);
        if (!cursor.behind(ScheduleCodec.scheduleKey(due, id))) {
          return due;
        }
      }
    }
    return null;
  }

  /** The stored bytes of {@code id}'s undelivered schedule, or null. */
  private byte[] storedEntry(byte[] id) {
    Long due = pendingDue(id);
    return due == null ? null : schedule.fetch(Bytes.wrap(ScheduleCodec.scheduleKey(due, id)), due);
  }

  /**
   * A CANCEL naming a requester is honoured only from the user who scheduled it ({@link ScheduleRules#cancelRefusal}).
   * Refused: the requester is told, then a {@link RejectedRecord} sends the CANCEL to the rejected topic (same
   * transaction). A CANCEL of an unknown or delivered id is a no-op anyway and never refused.
   */
  private void refuseCancelOfAnother(Record<byte[], byte[]> record, String requester, String id) {
    byte[] stored = requester == null ? null : storedEntry(record.key());
    if (stored == null) {
      return;
    }
    ScheduledEntry entry;
    try {
      entry = ScheduleCodec.decodeEntry(stored);
    } catch (RuntimeException e) {
      // Undecodable: its sender is unknown, as for an operator's schedule; the sweep quarantines it.
      return;
    }
    Optional<String> refusal = ScheduleRules.cancelRefusal(id, requester, entry);
    if (refusal.isEmpty()) {
      return;
    }
    Record<byte[], Outgoing> notice = refusals.notice(requester, id, entry, refusal.get(), record.timestamp());
    if (notice != null) {
      context.forward(notice);
    }
    throw reject("not-sender", refusal.get());
  }

  /** Removes the undelivered schedule of {@code id}; true if there was one. */
  private boolean remove(byte[] id) {
    Long due = pendingDue(id);
    if (due != null) {
      schedule.put(Bytes.wrap(ScheduleCodec.scheduleKey(due, id)), null, due);
      index.put(Bytes.wrap(id), null, due);
      gauges.pending(gauges.pending() - 1);
      return true;
    }
    return false;
  }

  /**
   * Delivers what is due at {@code now}, oldest first, within the thread's budget. While more is due, a short drain
   * punctuator keeps the batches coming; it cancels itself once the backlog is gone.
   */
  private void sweep(long now, boolean mainTick) {
    SweepBudget budget = budgets.get();
    int allowance = budget.allowance(now);
    byte[] upTo = ScheduleCodec.duePrefix(now + 1);
    if (allowance == 0) {
      // The thread's round is used up: wait for its commit, then the next round.
      ensureDrain();
      metrics.punctuated(0, now);
      return;
    }
    if (cursor.nothingBefore(upTo)) {
      // Nothing can be due yet (or the wall clock stepped back): never deliver early.
      metrics.punctuated(0, now);
      return;
    }
    long started = budget.start();
    int delivered = 0;
    byte[] lastKey = null;
    boolean more = false;
    long remaining = 0;
    // Only the regular tick (or a sweep without a drain) counts the rest, a scan; the drain ticks count down.
    boolean recount = mainTick || drain == null;
    byte[] resumeFrom = cursor.resumeFrom();
    long fromTs = ScheduleCodec.dueOf(resumeFrom);
    try (KeyValueIterator<Windowed<Bytes>, byte[]> due = schedule.fetch(Bytes.wrap(resumeFrom),
        Bytes.wrap(upTo), fromTs, now)) {
      while (due.hasNext()) {
        if (delivered >= allowance || !budget.timeLeft(started)) {
          more = true;
          break;
        }
        KeyValue<Windowed<Bytes>, byte[]> next = due.next();
        byte[] key = next.key.key().get();
        if (cursor.behind(key)) {
          continue;
        }
        ScheduledEntry entry;
        try {
          entry = ScheduleCodec.decodeEntry(next.value);
        } catch (RuntimeException e) {
          quarantine(key, next.value, e, now);
          lastKey = key;
          delivered++;
          continue;
        }
        if (targets.undecided(entry.topic())) {
          // Whether the target exists is not known yet (the topic list is being fetched, or the broker could not
          // be asked): stop here, in due order, and try again on the next drain tick. Never reject for that.
          more = true;
          break;
        }
        deliver(ScheduleCodec.idOf(key), entry, now);
        lastKey = key;
        delivered++;
      }
      if (more && recount) {
        while (due.hasNext() && remaining < DelayMetrics.BACKLOG_COUNT_LIMIT) {
          due.next();
          remaining++;
        }
      }
    }
    gauges.pending(gauges.pending() - delivered);
    if (more) {
      // Resume right after the last delivered key; later arrivals are filed after its millisecond.
      cursor.stoppedAfter(lastKey);
      gauges.backlog(recount ? remaining : Math.max(0, gauges.backlog() - delivered));
      ensureDrain();
    } else {
      cursor.caughtUp(upTo, now);
      gauges.backlog(0);
      if (drain != null) {
        drain.cancel();
        drain = null;
      }
    }
    writePosition(delivered > 0);
    if (budget.spent(started, delivered, now) || delivered > 0) {
      // The thread's next punctuations start a new transaction: one round per commit.
      context.commit();
    }
    metrics.punctuated(delivered, now);
  }

  private void ensureDrain() {
    if (drain == null) {
      drain = context.schedule(Duration.ofMillis(config.drainTickMs()), PunctuationType.WALL_CLOCK_TIME,
          t -> sweep(t, false));
    }
  }

  /** Stores the sweep position if it moved (in both stores, so both drop the segments behind it). */
  private void writePosition(boolean delivered) {
    SweepCursor.Move move = cursor.move(delivered, gauges.pending());
    if (move == null) {
      return;
    }
    byte[] value = ScheduleCodec.encodePosition(move.position());
    Bytes key = Bytes.wrap(ScheduleCodec.POSITION_KEY);
    schedule.put(key, value, move.ts());
    index.put(key, value, move.ts());
    if (move.previousTs() != SweepCursor.Move.NONE) {
      schedule.put(key, null, move.previousTs());
      index.put(key, null, move.previousTs());
    }
  }

  /** An entry that cannot be decoded goes to the rejected topic with its stored bytes, keyed by its id. */
  private void quarantine(byte[] scheduleKey, byte[] stored, RuntimeException cause, long now) {
    context.forward(Deliveries.undecodable(stores.schedule(), scheduleKey, stored, cause, now, rejectedTopic));
    metrics.rejected("undecodable");
  }

  private void deliver(byte[] id, ScheduledEntry entry, long now) {
    Optional<String> badTarget = targets.rejection(entry.topic());
    context.forward(Deliveries.due(id, entry, now, badTarget, rejectedTopic));
    if (badTarget.isPresent()) {
      metrics.rejected("target");
    } else {
      metrics.delivered(now - entry.deliverAtMs());
    }
  }

  /**
   * Counts a rejected input record under {@code category} (the metric's reason label) and returns the rejection to
   * throw: the processing exception handler writes the record, as it came, to the rejected topic with the reason.
   */
  private RejectedRecord reject(String category, String reason) {
    metrics.rejected(category);
    return new RejectedRecord(category.toUpperCase(Locale.ROOT).replace('-', '_'), reason, SOURCE);
  }

  @Override
  public void close() {
    metrics.closeTask(context.taskId());
  }
}
