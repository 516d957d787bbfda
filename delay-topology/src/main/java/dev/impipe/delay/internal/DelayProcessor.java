package dev.impipe.delay.internal;

import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.delay.DelayConfig;
import dev.impipe.delay.DelayHeaders;
import dev.impipe.delay.DelayMetrics;
import dev.impipe.delay.DelayTopology;
import dev.impipe.delay.TargetTopics;
import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.runtime.streams.StoredValues;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
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
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Files SCHEDULE commands under their due time, removes them on CANCEL, and on a wall-clock punctuator forwards
 * what is due — oldest first, within the stream thread's {@link SweepBudget} — and records how far it got. Forward
 * and position are in the same exactly-once transaction, so a crash delivers neither twice nor never.
 *
 * <p>One write per delivery: the schedule and index stores are segmented by due time (window stores), a delivered
 * entry is not deleted but left behind the sweep {@link ScheduleCodec.Position position}, which is written once per
 * punctuation that moved it (in both stores, filed at its segment + {@link DelayTopology#STORE_RETENTION_MS}). Kafka
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
  public record StoreNames(String schedule, String index, String legacySchedule, String legacyIndex) {}

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
  private KeyValueStore<Bytes, byte[]> legacySchedule;
  private KeyValueStore<Bytes, byte[]> legacyIndex;
  /** Null until the old stores were first looked at (lazily: the first command or sweep). */
  private Boolean legacyEmpty;
  private DelayMetrics.TaskGauges gauges;
  private byte[] resumeFrom;
  private long fileFromMs;
  /** The time the stored position record is filed under (Long.MIN_VALUE: none written by this instance). */
  private long positionTs = Long.MIN_VALUE;
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
    this.legacySchedule = ctx.getStateStore(stores.legacySchedule());
    this.legacyIndex = ctx.getStateStore(stores.legacyIndex());
    this.gauges = metrics.task(ctx.taskId());
    // Stores are restored before init: the last committed position says where the sweep was.
    ScheduleCodec.Position stored = storedPosition();
    if (stored == null) {
      resumeFrom = ScheduleCodec.duePrefix(0);
      fileFromMs = 0;
    } else {
      resumeFrom = stored.resumeFrom();
      fileFromMs = stored.fileFromMs();
      positionTs = positionTs(stored.resumeFrom());
      gauges.pending(stored.pending());
    }
    ctx.schedule(Duration.ofMillis(config.tickMs()), PunctuationType.WALL_CLOCK_TIME, now -> sweep(now, true));
  }

  /** Whether the key-value stores of an earlier release are empty (looked at once, then tracked). */
  private boolean legacyEmpty() {
    if (legacyEmpty == null) {
      try (KeyValueIterator<Bytes, byte[]> any = legacySchedule.all()) {
        legacyEmpty = !any.hasNext();
      }
      if (!legacyEmpty) {
        gauges.pending(gauges.pending() + legacyIndex.approximateNumEntries());
      }
    }
    return legacyEmpty;
  }

  private ScheduleCodec.Position storedPosition() {
    try (WindowStoreIterator<byte[]> it = schedule.backwardFetch(Bytes.wrap(ScheduleCodec.POSITION_KEY), 0,
        Long.MAX_VALUE)) {
      return it.hasNext() ? ScheduleCodec.decodePosition(it.next().value) : null;
    }
  }

  /** Where the position record for {@code resume} is filed: its segment's start + the stores' retention. */
  private long positionTs(byte[] resume) {
    long due = ScheduleCodec.dueOf(resume);
    return due - Math.floorMod(due, config.segmentMs()) + DelayTopology.STORE_RETENTION_MS - 1;
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
    if (id.isEmpty()) {
      throw reject("invalid", "missing key: a schedule command is keyed by its schedule id");
    }
    if (id.indexOf('\0') >= 0) {
      throw reject("invalid", "schedule id contains a NUL character");
    }
    if (!id.equals(command.getId())) {
      // CANCEL finds a schedule only in the partition of its key, so key and id must agree.
      throw reject("invalid", "key '" + id + "' does not match schedule id '" + command.getId() + "'");
    }
    if (command.getOp() == ScheduleOp.CANCEL) {
      refuseCancelOfAnother(record, command, id);
      metrics.cancelled(remove(record.key()));
      return;
    }
    if (command.getOp() != ScheduleOp.SCHEDULE) {
      throw reject("invalid", "unknown schedule operation " + command.getOp() + " (written by a newer producer?)");
    }
    long now = context.currentSystemTimeMs();
    long dueMs = command.getDeliverAt().toEpochMilli();
    if (dueMs > now + config.maxDelayMs()) {
      throw reject("max-delay", "deliverAt " + command.getDeliverAt() + " is more than the maximum delay of "
          + Duration.ofMillis(config.maxDelayMs()) + " ahead");
    }
    Optional<String> badTarget = targets.rejection(command.getTargetTopic());
    if (badTarget.isPresent()) {
      throw reject("target", badTarget.get());
    }
    boolean replaced = remove(record.key());
    byte[] entry = ScheduleCodec.encodeEntry(new ScheduledEntry(dueMs, command.getTargetTopic(),
        bytes(command.getKey()), bytes(command.getValue()), headers(command.getHeaders())));
    file(record.key(), dueMs, entry);
    if (!replaced) {
      gauges.pending(gauges.pending() + 1);
    }
    metrics.scheduled();
  }

  /** Files {@code entry} for {@code id} at its due time, or at {@link #fileFromMs} if that is later. */
  private void file(byte[] id, long dueMs, byte[] entry) {
    long fileAt = Math.max(Math.max(0, dueMs), fileFromMs);
    schedule.put(Bytes.wrap(ScheduleCodec.scheduleKey(fileAt, id)), entry, fileAt);
    index.put(Bytes.wrap(id), ScheduleCodec.indexValue(fileAt), fileAt);
  }

  /** The due time {@code id} is filed under if it is still undelivered, else null. */
  private Long pendingDue(byte[] id) {
    // Only the segments an undelivered entry can be in: filed at or after the sweep position's millisecond, at
    // most at the maximum delay from now (or at fileFromMs); not the delivered ones, not the position's own.
    long from = ScheduleCodec.dueOf(resumeFrom);
    long to = Math.max(context.currentSystemTimeMs() + config.maxDelayMs(), fileFromMs);
    try (WindowStoreIterator<byte[]> it = index.fetch(Bytes.wrap(id), from, to)) {
      while (it.hasNext()) {
        long due = ScheduleCodec.indexDue(it.next().value);
        if (OrderedKey.compare(ScheduleCodec.scheduleKey(due, id), resumeFrom) >= 0) {
          return due;
        }
      }
    }
    return null;
  }

  /** The stored bytes of {@code id}'s undelivered schedule, or null. */
  private byte[] storedEntry(byte[] id) {
    Long due = pendingDue(id);
    if (due != null) {
      return schedule.fetch(Bytes.wrap(ScheduleCodec.scheduleKey(due, id)), due);
    }
    if (!legacyEmpty()) {
      byte[] legacyDue = legacyIndex.get(Bytes.wrap(id));
      if (legacyDue != null) {
        return legacySchedule.get(Bytes.wrap(ScheduleCodec.scheduleKey(ScheduleCodec.indexDue(legacyDue), id)));
      }
    }
    return null;
  }

  /**
   * A CANCEL naming a requester is honoured only from the user who scheduled it ({@link DelayHeaders#SENDER} of the
   * schedule). Refused: the requester is told, then a {@link RejectedRecord} sends the CANCEL to the rejected topic
   * (same transaction). A CANCEL without a requester (an operator), of an unknown or delivered id (a no-op anyway),
   * or of a schedule that records no sender (scheduled before senders were recorded, or by an operator) is not
   * refused.
   */
  private void refuseCancelOfAnother(Record<byte[], byte[]> record, ScheduleCommand command, String id) {
    ByteBuffer requesterHeader = command.getHeaders().get(DelayHeaders.REQUESTER);
    if (requesterHeader == null) {
      return;
    }
    byte[] stored = storedEntry(record.key());
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
    byte[] sender = entry.headers().get(DelayHeaders.SENDER);
    String requester = new String(bytes(requesterHeader), StandardCharsets.UTF_8);
    if (sender == null || requester.equals(new String(sender, StandardCharsets.UTF_8))) {
      return;
    }
    String reason = "CANCEL of scheduled message " + id + " by " + requester + ", but only its sender may cancel it";
    Record<byte[], Outgoing> notice = refusals.notice(requester, id, entry, reason, record.timestamp());
    if (notice != null) {
      context.forward(notice);
    }
    throw reject("not-sender", reason);
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
    if (legacyEmpty()) {
      return false;
    }
    byte[] legacyDue = legacyIndex.get(Bytes.wrap(id));
    if (legacyDue == null) {
      return false;
    }
    legacySchedule.delete(Bytes.wrap(ScheduleCodec.scheduleKey(ScheduleCodec.indexDue(legacyDue), id)));
    legacyIndex.delete(Bytes.wrap(id));
    gauges.pending(gauges.pending() - 1);
    return true;
  }

  /**
   * Moves up to {@code limit} schedules of the key-value stores of an earlier release into the segmented stores
   * (filed no earlier than {@link #fileFromMs}, so never behind the sweep); returns how many it moved.
   */
  private int migrateLegacy(int limit) {
    int moved = 0;
    try (KeyValueIterator<Bytes, byte[]> all = legacySchedule.all()) {
      while (moved < limit && all.hasNext()) {
        KeyValue<Bytes, byte[]> next = all.next();
        byte[] id = ScheduleCodec.idOf(next.key.get());
        file(id, ScheduleCodec.dueOf(next.key.get()), next.value);
        legacySchedule.delete(next.key);
        legacyIndex.delete(Bytes.wrap(id));
        moved++;
      }
      legacyEmpty = !all.hasNext();
    }
    return moved;
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
    long started = budget.start();
    if (!legacyEmpty()) {
      allowance -= migrateLegacy(allowance);
    }
    if (OrderedKey.compare(resumeFrom, upTo) >= 0) {
      // Nothing can be due yet (or the wall clock stepped back): never deliver early.
      if (!legacyEmpty()) {
        budget.spent(started, 0, now);
        ensureDrain();
      }
      metrics.punctuated(0, now);
      return;
    }
    int delivered = 0;
    byte[] lastKey = null;
    boolean more = false;
    long remaining = 0;
    // Only the regular tick (or a sweep without a drain) counts the rest, a scan; the drain ticks count down.
    boolean recount = mainTick || drain == null;
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
        if (OrderedKey.compare(key, resumeFrom) < 0) {
          continue;
        }
        ScheduledEntry entry;
        try {
          entry = ScheduleCodec.decodeEntry(next.value);
        } catch (RuntimeException e) {
          quarantine(key, next.value, "undecodable stored schedule: " + e, now);
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
      if (lastKey != null) {
        resumeFrom = OrderedKey.after(lastKey);
        fileFromMs = ScheduleCodec.dueOf(lastKey) + 1;
      }
      gauges.backlog(recount ? remaining : Math.max(0, gauges.backlog() - delivered));
      ensureDrain();
    } else {
      resumeFrom = upTo;
      fileFromMs = now + 1;
      gauges.backlog(0);
      if (drain != null && legacyEmpty()) {
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

  /**
   * Stores the sweep position (in both stores, so both drop the segments behind it) if something was delivered
   * or the position moved into another segment; otherwise re-sweeping from the older stored position after a
   * crash finds nothing new, so it need not be written.
   */
  private void writePosition(boolean delivered) {
    long ts = positionTs(resumeFrom);
    if (!delivered && ts == positionTs) {
      return;
    }
    byte[] value = ScheduleCodec.encodePosition(new ScheduleCodec.Position(resumeFrom, fileFromMs,
        gauges.pending()));
    Bytes key = Bytes.wrap(ScheduleCodec.POSITION_KEY);
    schedule.put(key, value, ts);
    index.put(key, value, ts);
    if (positionTs != Long.MIN_VALUE && positionTs != ts) {
      schedule.put(key, null, positionTs);
      index.put(key, null, positionTs);
    }
    positionTs = ts;
  }

  /** An entry that cannot be decoded goes to the rejected topic with its stored bytes, keyed by its id. */
  private void quarantine(byte[] scheduleKey, byte[] stored, String reason, long now) {
    Headers headers = new RecordHeaders();
    headers.add(DelayHeaders.SCHEDULE_ID, ScheduleCodec.idOf(scheduleKey));
    addRejectHeaders(headers, StoredValues.UNDECODABLE, reason, stores.schedule());
    context.forward(new Record<>(ScheduleCodec.idOf(scheduleKey), new Outgoing(rejectedTopic, stored), now,
        headers));
    metrics.rejected("undecodable");
  }

  private void deliver(byte[] id, ScheduledEntry entry, long now) {
    Headers headers = new RecordHeaders();
    entry.headers().forEach(headers::add);
    Optional<String> badTarget = targets.rejection(entry.topic());
    if (badTarget.isPresent()) {
      // The topic went away (or the allow-list changed) since the record was scheduled.
      headers.add(DelayHeaders.SCHEDULE_ID, id);
      addRejectHeaders(headers, "TARGET", "undeliverable at " + now + ": " + badTarget.get(), entry.topic());
      context.forward(new Record<>(entry.key(), new Outgoing(rejectedTopic, entry.value()), now, headers));
      metrics.rejected("target");
      return;
    }
    headers.add(DelayHeaders.SCHEDULED_AT, Long.toString(entry.deliverAtMs()).getBytes(StandardCharsets.UTF_8));
    context.forward(new Record<>(entry.key(), new Outgoing(entry.topic(), entry.value()), now, headers));
    metrics.delivered(now - entry.deliverAtMs());
  }

  /**
   * Counts a rejected input record under {@code category} (the metric's reason label) and returns the rejection to
   * throw: the processing exception handler writes the record, as it came, to the rejected topic with the reason.
   */
  private RejectedRecord reject(String category, String reason) {
    metrics.rejected(category);
    return new RejectedRecord(category.toUpperCase(Locale.ROOT).replace('-', '_'), reason, SOURCE);
  }

  /** The reason headers of a record this processor writes to the rejected topic itself (from a punctuation). */
  private static void addRejectHeaders(Headers headers, String code, String reason, String topic) {
    RejectedHeaders.add(headers, RejectedHeaders.MESSAGE, reason);
    RejectedHeaders.add(headers, RejectedHeaders.CODE, code);
    RejectedHeaders.add(headers, RejectedHeaders.SOURCE, SOURCE);
    RejectedHeaders.add(headers, RejectedHeaders.TOPIC, topic);
  }

  @Override
  public void close() {
    metrics.closeTask(context.taskId());
  }

  private static byte[] bytes(ByteBuffer buffer) {
    if (buffer == null) {
      return null;
    }
    ByteBuffer copy = buffer.duplicate();
    byte[] out = new byte[copy.remaining()];
    copy.get(out);
    return out;
  }

  private static Map<String, byte[]> headers(Map<String, ByteBuffer> headers) {
    Map<String, byte[]> out = new LinkedHashMap<>();
    headers.forEach((name, value) -> out.put(name, bytes(value)));
    return out;
  }
}
