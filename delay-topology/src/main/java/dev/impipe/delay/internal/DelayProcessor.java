package dev.impipe.delay.internal;

import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.delay.DelayConfig;
import dev.impipe.delay.DelayHeaders;
import dev.impipe.delay.DelayMetrics;
import dev.impipe.delay.TargetTopics;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Files SCHEDULE commands under their due time, removes them on CANCEL, and on a wall-clock punctuator forwards
 * what is due — oldest first, at most one batch per punctuation — and deletes it. Forward and delete are in the
 * same exactly-once transaction, so a crash delivers neither twice nor never.
 *
 * <p>The sweep position is memory only: {@link #resumeFrom}, the smallest key any undelivered entry can have, and
 * {@link #fileFromMs}, the earliest due time a new entry may be filed under (its prefix is at or after
 * {@code resumeFrom}). Both start at 0 after every (re)start, so whatever fell due while the app was down is found
 * by the first sweeps. A sweep that stops at its batch limit resumes right after the last key it delivered, so a
 * million records due in one millisecond are not re-read (as tombstones) by every batch. Records that arrive already
 * due are filed at {@code fileFromMs} rather than their own past due time, so they are never filed behind the
 * sweep; they keep their requested time for the scheduled-at header and the lateness metric.
 */
public final class DelayProcessor implements Processor<byte[], byte[], byte[], Outgoing> {

  private final String inputTopic;
  private final String rejectedTopic;
  private final String scheduleStoreName;
  private final String indexStoreName;
  private final DelayConfig config;
  private final TargetTopics targets;
  private final DelayMetrics metrics;
  private final Deserializer<ScheduleCommand> commands;
  private final CancelRefusals refusals;

  private ProcessorContext<byte[], Outgoing> context;
  private KeyValueStore<Bytes, byte[]> schedule;
  private KeyValueStore<Bytes, byte[]> index;
  private DelayMetrics.TaskGauges gauges;
  private byte[] resumeFrom;
  private long fileFromMs;
  private Cancellable drain;

  public DelayProcessor(String inputTopic, String rejectedTopic, String scheduleStoreName, String indexStoreName,
      DelayConfig config, TargetTopics targets, DelayMetrics metrics, Deserializer<ScheduleCommand> commands,
      CancelRefusals refusals) {
    this.inputTopic = inputTopic;
    this.rejectedTopic = rejectedTopic;
    this.scheduleStoreName = scheduleStoreName;
    this.indexStoreName = indexStoreName;
    this.config = config;
    this.targets = targets;
    this.metrics = metrics;
    this.commands = commands;
    this.refusals = refusals;
  }

  @Override
  public void init(ProcessorContext<byte[], Outgoing> ctx) {
    this.context = ctx;
    this.schedule = ctx.getStateStore(scheduleStoreName);
    this.index = ctx.getStateStore(indexStoreName);
    this.gauges = metrics.task(ctx.taskId());
    // Stores are restored before init, so this counts what survived a restart (an estimate for RocksDB).
    gauges.pending(index.approximateNumEntries());
    this.resumeFrom = ScheduleCodec.duePrefix(0);
    this.fileFromMs = 0;
    ctx.schedule(Duration.ofMillis(config.tickMs()), PunctuationType.WALL_CLOCK_TIME, now -> sweep(now, true));
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    if (record.value() == null) {
      reject(record, "invalid", "no schedule command (null value)");
      return;
    }
    ScheduleCommand command;
    try {
      command = commands.deserialize(inputTopic, record.headers(), record.value());
    } catch (RuntimeException e) {
      reject(record, "invalid", "undecodable schedule command: " + e.getMessage());
      return;
    }
    String id = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
    if (id.isEmpty()) {
      reject(record, "invalid", "missing key: a schedule command is keyed by its schedule id");
      return;
    }
    if (!id.equals(command.getId())) {
      // CANCEL finds a schedule only in the partition of its key, so key and id must agree.
      reject(record, "invalid", "key '" + id + "' does not match schedule id '" + command.getId() + "'");
      return;
    }
    if (command.getOp() == ScheduleOp.CANCEL) {
      if (!refusedCancel(record, command, id)) {
        metrics.cancelled(remove(record.key()));
      }
      return;
    }
    if (command.getOp() != ScheduleOp.SCHEDULE) {
      reject(record, "invalid", "unknown schedule operation " + command.getOp() + " (written by a newer producer?)");
      return;
    }
    long now = context.currentSystemTimeMs();
    long dueMs = command.getDeliverAt().toEpochMilli();
    if (dueMs > now + config.maxDelayMs()) {
      reject(record, "max-delay", "deliverAt " + command.getDeliverAt() + " is more than the maximum delay of "
          + Duration.ofMillis(config.maxDelayMs()) + " ahead");
      return;
    }
    Optional<String> badTarget = targets.rejection(command.getTargetTopic());
    if (badTarget.isPresent()) {
      reject(record, "target", badTarget.get());
      return;
    }
    boolean replaced = remove(record.key());
    long fileAt = Math.max(dueMs, fileFromMs);
    byte[] entry = ScheduleCodec.encodeEntry(new ScheduledEntry(dueMs, command.getTargetTopic(),
        bytes(command.getKey()), bytes(command.getValue()), headers(command.getHeaders())));
    schedule.put(Bytes.wrap(ScheduleCodec.scheduleKey(fileAt, record.key())), entry);
    index.put(Bytes.wrap(record.key()), ScheduleCodec.indexValue(fileAt));
    if (!replaced) {
      gauges.pending(gauges.pending() + 1);
    }
    metrics.scheduled();
  }

  /**
   * A CANCEL naming a requester is honoured only from the user who scheduled it ({@link DelayHeaders#SENDER} of the
   * schedule). Refused: the CANCEL goes to the rejected topic and the requester is told; true. A CANCEL without a
   * requester (an operator), of an unknown or delivered id (a no-op anyway), or of a schedule that records no
   * sender (scheduled before senders were recorded, or by an operator) is not refused.
   */
  private boolean refusedCancel(Record<byte[], byte[]> record, ScheduleCommand command, String id) {
    ByteBuffer requesterHeader = command.getHeaders().get(DelayHeaders.REQUESTER);
    if (requesterHeader == null) {
      return false;
    }
    byte[] due = index.get(Bytes.wrap(record.key()));
    if (due == null) {
      return false;
    }
    byte[] stored = schedule.get(Bytes.wrap(ScheduleCodec.scheduleKey(ScheduleCodec.indexDue(due), record.key())));
    if (stored == null) {
      return false;
    }
    ScheduledEntry entry = ScheduleCodec.decodeEntry(stored);
    byte[] sender = entry.headers().get(DelayHeaders.SENDER);
    String requester = new String(bytes(requesterHeader), StandardCharsets.UTF_8);
    if (sender == null || requester.equals(new String(sender, StandardCharsets.UTF_8))) {
      return false;
    }
    String reason = "CANCEL of scheduled message " + id + " by " + requester + ", but only its sender may cancel it";
    Record<byte[], Outgoing> notice = refusals.notice(requester, id, entry, reason, record.timestamp());
    if (notice != null) {
      context.forward(notice);
    }
    reject(record, "not-sender", reason);
    return true;
  }

  /** Removes the schedule of {@code id}; true if there was one. */
  private boolean remove(byte[] id) {
    byte[] due = index.get(Bytes.wrap(id));
    if (due == null) {
      return false;
    }
    schedule.delete(Bytes.wrap(ScheduleCodec.scheduleKey(ScheduleCodec.indexDue(due), id)));
    index.delete(Bytes.wrap(id));
    gauges.pending(gauges.pending() - 1);
    return true;
  }

  /**
   * Delivers what is due at {@code now}, oldest first, at most one batch. While more is due, a short drain
   * punctuator keeps the batches coming; it cancels itself once the backlog is gone.
   */
  private void sweep(long now, boolean mainTick) {
    byte[] upTo = ScheduleCodec.duePrefix(now + 1);
    if (Arrays.compareUnsigned(resumeFrom, upTo) >= 0) {
      // Nothing can be due yet (or the wall clock stepped back): never deliver early.
      metrics.punctuated(0, now);
      return;
    }
    int delivered = 0;
    byte[] lastKey = null;
    boolean more = false;
    long remaining = 0;
    Bytes from = Bytes.wrap(resumeFrom);
    Bytes to = Bytes.wrap(upTo);
    try (KeyValueIterator<Bytes, byte[]> due = schedule.range(from, to)) {
      while (due.hasNext()) {
        if (delivered == config.batch()) {
          more = true;
          break;
        }
        KeyValue<Bytes, byte[]> next = due.next();
        byte[] key = next.key.get();
        ScheduledEntry entry = ScheduleCodec.decodeEntry(next.value);
        if (targets.undecided(entry.topic())) {
          // Whether the target exists is not known yet (the topic list is being fetched, or the broker could not
          // be asked): stop here, in due order, and try again on the next drain tick. Never reject for that.
          more = true;
          break;
        }
        deliver(ScheduleCodec.idOf(key), entry, now);
        schedule.delete(next.key);
        index.delete(Bytes.wrap(ScheduleCodec.idOf(key)));
        lastKey = key;
        delivered++;
      }
      if (more && (mainTick || drain == null)) {
        // Only on the regular tick: counting the rest costs a scan, the drain ticks just count down.
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
        resumeFrom = Arrays.copyOf(lastKey, lastKey.length + 1);
        fileFromMs = ScheduleCodec.dueOf(lastKey) + 1;
      }
      gauges.backlog(mainTick || drain == null ? remaining : gauges.backlog() - delivered);
      if (drain == null) {
        drain = context.schedule(Duration.ofMillis(config.drainTickMs()), PunctuationType.WALL_CLOCK_TIME,
            t -> sweep(t, false));
      }
    } else {
      resumeFrom = upTo;
      fileFromMs = now + 1;
      gauges.backlog(0);
      if (drain != null) {
        drain.cancel();
        drain = null;
      }
    }
    metrics.punctuated(delivered, now);
  }

  private void deliver(byte[] id, ScheduledEntry entry, long now) {
    Headers headers = new RecordHeaders();
    entry.headers().forEach(headers::add);
    Optional<String> badTarget = targets.rejection(entry.topic());
    if (badTarget.isPresent()) {
      // The topic went away (or the allow-list changed) since the record was scheduled.
      headers.add(DelayHeaders.SCHEDULE_ID, id);
      addRejectHeaders(headers, "undeliverable at " + now + ": " + badTarget.get(), entry.topic());
      context.forward(new Record<>(entry.key(), new Outgoing(rejectedTopic, entry.value()), now, headers));
      metrics.rejected("target");
      return;
    }
    headers.add(DelayHeaders.SCHEDULED_AT, Long.toString(entry.deliverAtMs()).getBytes(StandardCharsets.UTF_8));
    context.forward(new Record<>(entry.key(), new Outgoing(entry.topic(), entry.value()), now, headers));
    metrics.delivered(now - entry.deliverAtMs());
  }

  private void reject(Record<byte[], byte[]> record, String category, String reason) {
    // The original key, value and headers, as they came, plus why.
    Headers headers = new RecordHeaders(record.headers().toArray());
    addRejectHeaders(headers, reason, inputTopic);
    context.recordMetadata().ifPresent(m -> {
      headers.add(DelayHeaders.REJECT_PARTITION, Integer.toString(m.partition()).getBytes(StandardCharsets.UTF_8));
      headers.add(DelayHeaders.REJECT_OFFSET, Long.toString(m.offset()).getBytes(StandardCharsets.UTF_8));
    });
    context.forward(new Record<>(record.key(), new Outgoing(rejectedTopic, record.value()), record.timestamp(),
        headers));
    metrics.rejected(category);
  }

  private static void addRejectHeaders(Headers headers, String reason, String topic) {
    headers.add(DelayHeaders.REJECT_REASON, reason.getBytes(StandardCharsets.UTF_8));
    headers.add(DelayHeaders.REJECT_SOURCE, "delay".getBytes(StandardCharsets.UTF_8));
    headers.add(DelayHeaders.REJECT_TOPIC, topic.getBytes(StandardCharsets.UTF_8));
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
