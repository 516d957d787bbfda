package dev.impipe.ack.wheel;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.ack.wheel.WheelCodec.Pending;
import dev.impipe.ack.wheel.WheelCodec.WheelKey;
import dev.impipe.avro.Ack;
import dev.impipe.avro.Delivery;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.runtime.streams.StoredValues;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The time wheel of one partition: {@link Delivery} records arm a timer, cumulative {@link Ack} records disarm every
 * timer of the device up to their seq, and a wall-clock punctuator expires the overdue slots in key order.
 *
 * <p>The wheel has {@value WheelRules#SLOTS_PER_TICK} slots per tick. A deadline {@code d} lands in slot
 * {@code ceil(d / slot)}, so an entry never fires before its deadline; the punctuator, anchored on slot boundaries and run once per slot, at
 * wall time {@code now} expires every slot {@code <= floor(now / slot)}, oldest first, at most
 * {@code maxEntriesPerPunctuation} entries per round. While a backlog remains a catch-up punctuator runs every
 * {@code catchUpInterval} until the wheel has caught up with the clock.
 */
public final class AckWheelProcessor implements Processor<String, SpecificRecord, Object, Object> {

  /** Time the wheels of one stream thread may spend expiring per window: a safety net (slow disk), far under the
   * 10 s transaction timeout; the entry bound is what normally applies. */
  static final long MAX_MS_PER_WINDOW = 1_000;
  /** Most {@code ack-acked} keys one punctuation looks at while scanning for old ones. */
  static final int ACKED_SCAN_PER_RUN = 10_000;
  /** How often the marks are checked between two slot-boundary rounds while one is not reached yet. */
  static final long RECHECK_MS = 100;
  /** The stores, sinks and header the topology names for this processor. */
  public record StoreNames(String pending, String wheel, String acked, String timeoutsSink, String rejectedSink,
      String finalHeader) {}

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AckWheelProcessor.class);

  private final AckTimeoutConfig config;
  private final PunctuationBudget budget;
  private final AckWheelMetrics metrics;
  /** Width of one slot, and the period of the punctuator. */
  private final long slotMs;
  private final long timeoutMs;

  private final StoreNames names;
  private ProcessorContext<Object, Object> context;
  private final AckedSweep ackedSweep;
  private Timers timers;
  private KeyValueStore<Bytes, byte[]> ackedStore;
  private String taskId;
  private Cancellable catchUp;
  /** How far each input of this task has been read. */
  private final InputMarks inputs;
  private final String deliveriesTopic;
  private final String acksTopic;
  private final InputLag inputLag;
  private int partition;
  /** Re-checks the marks between rounds while some are not reached yet. */
  private Cancellable recheck;

  /**
   * @param budget shared by the wheels of all tasks of the app: bounds what one stream thread expires per window
   * @param deliveriesTopic the deliveries topic, whose partition of this task {@code inputLag} is asked about
   * @param acksTopic likewise for the ACKs
   * @param inputLag how far the stream thread's consumer is behind an input partition's end
   * @param names the stores and sinks, as the topology named them
   */
  public AckWheelProcessor(AckTimeoutConfig config, AckWheelMetrics metrics, PunctuationBudget budget,
      String deliveriesTopic, String acksTopic, InputLag inputLag, StoreNames names) {
    this.config = config;
    this.names = names;
    this.budget = budget;
    this.metrics = metrics;
    this.slotMs = WheelRules.slotMs(config);
    this.timeoutMs = config.timeout().toMillis();
    this.inputs = new InputMarks(config.inputGrace().toMillis(), config.inputLagToleranceMs(),
        config.inputIdleMs());
    this.deliveriesTopic = deliveriesTopic;
    this.acksTopic = acksTopic;
    this.inputLag = inputLag;
    this.ackedSweep = new AckedSweep(config.ackedRetention().toMillis(), ACKED_SCAN_PER_RUN);
  }

  @Override
  public void init(ProcessorContext<Object, Object> ctx) {
    this.context = ctx;
    this.ackedStore = ctx.getStateStore(names.acked());
    this.taskId = ctx.taskId().toString();
    this.partition = ctx.taskId().partition();
    this.timers = new Timers(ctx.getStateStore(names.pending()), ctx.getStateStore(names.wheel()),
        metrics.pendingOf(taskId));
    inputs.start(ctx.currentSystemTimeMs());
    // Anchored on slot boundaries, so a slot fires as soon as it is due: lateness < 1 slot (plus reading up to the
    // slot's mark), not up to 2 slots as with a punctuator whose phase is wherever the task happened to start.
    long nextBoundary = (Math.floorDiv(ctx.currentSystemTimeMs(), slotMs) + 1) * slotMs;
    ctx.schedule(Instant.ofEpochMilli(nextBoundary), Duration.ofMillis(slotMs), PunctuationType.WALL_CLOCK_TIME,
        this::expire);
  }

  @Override
  public void process(Record<String, SpecificRecord> record) {
    SpecificRecord value = record.value();
    if (value instanceof Delivery delivery) {
      onDelivery(record.key(), delivery);
      inputs.deliveryRead(context.currentSystemTimeMs(), record.timestamp(), offset());
    } else if (value instanceof Ack ack) {
      onAck(record.key(), ack);
      inputs.ackRead(context.currentSystemTimeMs(), record.timestamp(), offset());
    }
    // Tombstones (null values) carry nothing to do.
  }

  private long offset() {
    return context.recordMetadata().map(m -> m.offset()).orElse(-1L);
  }

  private void onDelivery(String key, Delivery delivery) {
    String user = delivery.getUserId();
    String device = delivery.getDeviceId();
    requireRouted(key, user, device);
    long seq = delivery.getSeq();
    byte[] acked = ackedStore.get(Bytes.wrap(WheelCodec.device(user, device)));
    if (acked != null && seq <= WheelCodec.decodeSeqValue(acked)) {
      // The ACK overtook the delivery record (the client answered before the push worker's write landed).
      metrics.deliveryIgnored();
      return;
    }
    long pushedAt = delivery.getPushedAt().toEpochMilli();
    long deadline = pushedAt + timeoutMs;
    long slot = slotOf(deadline);
    timers.pushed(user, device, seq, new Pending(slot, pushedAt, deadline, Math.max(1, delivery.getAttempt())));
  }

  private void onAck(String key, Ack ack) {
    String user = ack.getUserId();
    String device = ack.getDeviceId();
    requireRouted(key, user, device);
    long seq = ack.getSeq();
    Bytes deviceKey = Bytes.wrap(WheelCodec.device(user, device));
    byte[] previous = ackedStore.get(deviceKey);
    Long previousSeq = previous == null ? null : WheelCodec.decodeSeqValue(previous);
    if (previousSeq == null || seq >= previousSeq) {
      // The time of the ACK keeps the entry for IM_ACK_ACKED_RETENTION from the device's last ACK.
      ackedStore.put(deviceKey, WheelCodec.ackedValue(seq, context.currentSystemTimeMs()));
    }
    // Cumulative: every pending seq <= the ACKed one on this device, found by a range of the device's prefix
    // (WheelRules#ackClearsFrom: the range seek was the stream thread's hot spot at --rate max).
    OptionalLong from = WheelRules.ackClearsFrom(previousSeq, seq);
    if (from.isEmpty()) {
      return;
    }
    timers.acked(user, device, from.getAsLong(), seq);
  }

  /**
   * Up to which time the inputs are known to have been read ({@link InputMarks}).
   *
   * @param ask whether to ask for the end offsets now (a slot-boundary round) or only to check the marks noted so
   *     far against what has been processed since (the re-checks between rounds: no request)
   */
  long inputHorizon(long now, boolean ask) {
    if (ask) {
      inputs.ends(now, inputLag.ends(deliveriesTopic, partition, now), inputLag.ends(acksTopic, partition, now));
    }
    return inputs.horizon(now);
  }

  /**
   * One punctuation round: expires overdue entries, oldest slot first, as far as the stream thread's budget for
   * this window allows (shared with its other tasks), then goes on with the rolling scan of {@code ack-acked}.
   */
  void expire(long now) {
    expire(now, true);
  }

  /**
   * @param ask whether this round asks the broker for the inputs' end offsets (the slot-boundary rounds); the
   *     catch-up and re-check rounds only check what has been processed against the marks noted so far
   */
  private void expire(long now, boolean ask) {
    boolean more;
    try (PunctuationBudget.Lease lease = budget.lease(now)) {
      more = expireDue(now, lease, ask);
      if (!more) {
        sweepAcked(now, lease);
      }
    }
    if (more && catchUp == null) {
      catchUp = context.schedule(config.catchUpInterval(), PunctuationType.WALL_CLOCK_TIME, t -> expire(t, false));
    } else if (!more && catchUp != null) {
      catchUp.cancel();
      catchUp = null;
    }
    // A mark not reached yet holds due slots back until the inputs are processed that far: look again soon, not a
    // tick later.
    boolean waiting = inputs.waiting();
    if (waiting && recheck == null) {
      recheck = context.schedule(Duration.ofMillis(Math.min(RECHECK_MS, slotMs)), PunctuationType.WALL_CLOCK_TIME,
          t -> expire(t, false));
    } else if (!waiting && recheck != null) {
      recheck.cancel();
      recheck = null;
    }
  }

  /** Expires what the lease allows; true if overdue entries are left. */
  private boolean expireDue(long now, PunctuationBudget.Lease lease, boolean ask) {
    long nowSlot = Math.floorDiv(Math.min(now, inputHorizon(now, ask)), slotMs);
    if (timers.cursor() > nowSlot) {
      return false;
    }
    List<WheelKey> due = new ArrayList<>();
    List<byte[]> undecodable = new ArrayList<>();
    boolean more = false;
    try (KeyValueIterator<Bytes, byte[]> it = timers.dueBefore(nowSlot + 1)) {
      while (it.hasNext()) {
        if (!lease.take(1)) {
          more = true;
          break;
        }
        byte[] key = it.next().key.get();
        try {
          due.add(WheelCodec.decodeWheel(key));
        } catch (RuntimeException e) {
          undecodable.add(key);
        }
      }
    }
    // Slots before the last one seen are now empty; the last one may hold more (the rest of the batch).
    if (!more) {
      timers.cursor(nowSlot + 1);
    } else if (!due.isEmpty()) {
      timers.cursor(due.get(due.size() - 1).slot());
    }
    for (byte[] key : undecodable) {
      quarantine(names.wheel(), key, key, null, new IllegalArgumentException("not a wheel key"), now);
      timers.removeEntry(Bytes.wrap(key));
    }

    TimeoutBatcher batches = new TimeoutBatcher();
    for (WheelKey k : due) {
      timers.removeEntry(Bytes.wrap(WheelCodec.wheel(k.slot(), k.userId(), k.deviceId(), k.seq())));
      Bytes pendingKey = Bytes.wrap(WheelCodec.pending(k.userId(), k.deviceId(), k.seq()));
      byte[] raw = timers.pendingValue(pendingKey);
      if (raw == null) {
        continue;
      }
      Pending p;
      try {
        p = WheelCodec.decodePendingValue(raw);
      } catch (RuntimeException e) {
        // A timer that cannot be read would fail this slot at every round: out of the wheel, bytes kept.
        quarantine(names.pending(), pendingKey.get(), raw, k.userId(), e, now);
        timers.removePending(pendingKey);
        continue;
      }
      WheelRules.Expiry expiry = WheelRules.expire(k.slot(), p, now, timeoutMs, config.maxAttempts(), slotMs);
      if (expiry == null) {
        continue;
      }
      if (expiry.rearm() != null) {
        timers.arm(k.userId(), k.deviceId(), k.seq(), expiry.rearm());
      } else {
        timers.removePending(pendingKey);
      }
      if (expiry.emit()) {
        batches.add(k.userId(), k.deviceId(), k.seq(), p, expiry.isFinal());
      }
    }
    batches.timeouts().forEach(timeout -> emit(timeout, now));
    return more;
  }

  /** A slice of the rolling scan of {@code ack-acked} ({@link AckedSweep}), within the round's lease. */
  private void sweepAcked(long now, PunctuationBudget.Lease lease) {
    if (!ackedSweep.due(now)) {
      return;
    }
    List<Bytes> old;
    try (KeyValueIterator<Bytes, byte[]> it = ackedStore.range(ackedSweep.from(), null)) {
      old = ackedSweep.slice(it, now, () -> lease.take(1));
    }
    old.forEach(k -> Timers.remove(ackedStore, k));
  }

  private void quarantine(String store, byte[] key, byte[] stored, String user, RuntimeException e, long now) {
    LOG.warn("Entry of {} does not decode; moved to the rejected topic", store, e);
    StoredValues.Undecodable bad = StoredValues.undecodable(stored, e);
    context.forward(StoredValues.rejected(store, key, user, bad, now), names.rejectedSink());
  }

  private void emit(TimeoutBatcher.Timeout timeout, long now) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(names.finalHeader(), Boolean.toString(timeout.isFinal()).getBytes(StandardCharsets.UTF_8));
    context.forward(new Record<>(timeout.value().getUserId(), timeout.value(), now, headers), names.timeoutsSink());
    metrics.timeoutEmitted(timeout.isFinal(), timeout.value().getSeqs().size(),
        now - timeout.value().getDeadline().toEpochMilli());
  }

  private long slotOf(long deadline) {
    return WheelRules.slotOf(deadline, slotMs);
  }

  private static void requireRouted(String key, String user, String device) {
    // A record keyed by anything but its user id sits in the wrong partition: its ACK could never meet it.
    if (!user.equals(key)) {
      throw RejectedRecord.invalid("record key '" + key + "' is not its userId '" + user + "'");
    }
    if (device.isEmpty()) {
      throw RejectedRecord.invalid("empty deviceId for user '" + user + "'");
    }
  }

  @Override
  public void close() {
    metrics.release(taskId);
  }
}
