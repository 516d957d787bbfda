package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.InputLag;
import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.ack.wheel.WheelCodec.SlotKey;
import dev.impipe.avro.Ack;
import dev.impipe.avro.Delivery;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.RejectedRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.avro.specific.SpecificRecord;
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
 * The time wheel of one partition, one record per device ({@link DeviceTimers}): a {@link Delivery} (one seq, or a
 * range up to its {@code toSeq}) adds to the device's pending runs, a cumulative {@link Ack} trims them up to its
 * seq, and a wall-clock punctuator expires the devices of the overdue slots in key order.
 *
 * <p>The wheel has {@value WheelRules#SLOTS_PER_TICK} slots per tick. A deadline {@code d} lands in slot
 * {@code ceil(d / slot)}, so an entry never fires before its deadline; the punctuator, anchored on slot boundaries and run once per slot, at
 * wall time {@code now} expires every slot {@code <= floor(now / slot)}, oldest first, at most
 * {@code maxEntriesPerPunctuation} seqs per round (a device's run is split where the round's budget ends). While a backlog remains a catch-up punctuator runs every
 * {@code catchUpInterval} until the wheel has caught up with the clock.
 */
public final class AckWheelProcessor implements Processor<String, SpecificRecord, Object, Object> {

  /** Time the wheels of one stream thread may spend expiring per window: a safety net (slow disk), far under the
   * 10 s transaction timeout; the entry bound is what normally applies. */
  static final long MAX_MS_PER_WINDOW = 1_000;
  /** Most device records one punctuation looks at while scanning for ones to forget. */
  static final int ACKED_SCAN_PER_RUN = 10_000;
  /** How often the marks are checked between two slot-boundary rounds while one is not reached yet. */
  static final long RECHECK_MS = 100;
  /** The stores, sinks and header the topology names for this processor. */
  public record StoreNames(String devices, String slots, String timeoutsSink, String rejectedSink,
      String finalHeader) {}

  private final AckTimeoutConfig config;
  private final PunctuationBudget budget;
  private final AckWheelMetrics metrics;
  /** Width of one slot, and the period of the punctuator. */
  private final long slotMs;
  private final long timeoutMs;

  private final StoreNames names;
  private ProcessorContext<Object, Object> context;
  private final AckedSweep ackedSweep;
  private final DeviceTimers.Policy policy;
  private Timers timers;
  private WheelOutput output;
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
        config.inputIdleMs(), metrics::inputWaited);
    this.deliveriesTopic = deliveriesTopic;
    this.acksTopic = acksTopic;
    this.inputLag = metrics.countingUnknownEnds(inputLag, deliveriesTopic);
    this.ackedSweep = new AckedSweep(config.ackedRetention().toMillis(), ACKED_SCAN_PER_RUN);
    this.policy = new DeviceTimers.Policy(timeoutMs, config.maxAttempts(), slotMs);
  }

  @Override
  public void init(ProcessorContext<Object, Object> ctx) {
    this.context = ctx;
    this.output = new WheelOutput(ctx, names, metrics);
    this.taskId = ctx.taskId().toString();
    this.partition = ctx.taskId().partition();
    KeyValueStore<Bytes, byte[]> devices = ctx.getStateStore(names.devices());
    this.timers = new Timers(devices, ctx.getStateStore(names.slots()), metrics.pendingOf(taskId),
        config.maxPendingPerDevice());
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
    long toSeq = delivery.getToSeq() == null ? seq : delivery.getToSeq();
    if (toSeq < seq || toSeq - seq >= config.maxPendingPerDevice()) {
      throw RejectedRecord.invalid("Delivery range " + seq + ".." + toSeq + " is empty or longer than "
          + AckTimeoutConfig.IM_ACK_MAX_PENDING_PER_DEVICE + "=" + config.maxPendingPerDevice());
    }
    long pushedAt = delivery.getPushedAt().toEpochMilli();
    long deadline = pushedAt + timeoutMs;
    Bytes deviceKey = Bytes.wrap(WheelCodec.device(user, device));
    DeviceTimers state = read(deviceKey, user);
    Set<Long> slots = state.slots();
    DeviceTimers.Delivered done = state.deliver(seq, toSeq, WheelRules.slotOf(deadline, slotMs), pushedAt, deadline,
        Math.max(1, delivery.getAttempt()), config.maxPendingPerDevice());
    // Seqs whose ACK overtook the delivery record (the client answered before the gateway's write landed); mostly 0.
    metrics.deliveryIgnored(done.ignored());
    if (done.refused()) {
      throw RejectedRecord.invalid("device '" + device + "' of user '" + user + "' would have more than "
          + AckTimeoutConfig.IM_ACK_MAX_PENDING_PER_DEVICE + "=" + config.maxPendingPerDevice() + " pending seqs");
    }
    if (done.ignored() <= toSeq - seq) {
      timers.write(user, device, deviceKey, slots, state, done.added());
    }
  }

  private void onAck(String key, Ack ack) {
    String user = ack.getUserId();
    String device = ack.getDeviceId();
    requireRouted(key, user, device);
    Bytes deviceKey = Bytes.wrap(WheelCodec.device(user, device));
    DeviceTimers state = read(deviceKey, user);
    if (state.ackedSeq() != DeviceTimers.NO_ACK && ack.getSeq() < state.ackedSeq()) {
      return; // an older cumulative ACK: nothing to do
    }
    Set<Long> slots = state.slots();
    // The time of the ACK keeps the record for IM_ACK_ACKED_RETENTION from the device's last ACK.
    long removed = state.ack(ack.getSeq(), context.currentSystemTimeMs());
    timers.write(user, device, deviceKey, slots, state, -removed);
  }

  /** The device's record, or a fresh one; a stored one that does not decode goes to the rejected topic. */
  private DeviceTimers read(Bytes deviceKey, String user) {
    byte[] raw = timers.raw(deviceKey);
    try {
      return timers.decode(raw);
    } catch (RuntimeException e) {
      output.quarantine(names.devices(), deviceKey.get(), raw, user, e, context.currentSystemTimeMs());
      timers.removeDevice(deviceKey);
      return DeviceTimers.empty();
    }
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

  /** Expires what the lease allows; true if overdue seqs are left. */
  private boolean expireDue(long now, PunctuationBudget.Lease lease, boolean ask) {
    long nowSlot = Math.floorDiv(Math.min(now, inputHorizon(now, ask)), slotMs);
    if (timers.cursor() > nowSlot) {
      return false;
    }
    // Each due key holds at least one seq: no more keys than the window has seqs left (at least one: progress).
    long keysMax = Math.max(1, budget.remainingRecords());
    List<byte[]> due = new ArrayList<>();
    boolean more = false;
    try (KeyValueIterator<Bytes, byte[]> it = timers.dueBefore(nowSlot + 1)) {
      while (it.hasNext()) {
        if (due.size() >= keysMax) {
          more = true;
          break;
        }
        due.add(it.next().key.get());
      }
    }
    TimeoutBatcher batches = new TimeoutBatcher();
    long resumeAt = more ? timers.cursor() : nowSlot + 1;
    for (byte[] key : due) {
      SlotKey k;
      try {
        k = WheelCodec.decodeSlot(key);
      } catch (RuntimeException e) {
        output.quarantine(names.slots(), key, key, null, new IllegalArgumentException("not a slot key"), now);
        timers.removeSlot(Bytes.wrap(key));
        continue;
      }
      // Slots before the one the round stops in are now empty; that one may hold more (the rest of the batch).
      resumeAt = more ? k.slot() : resumeAt;
      if (!expireDevice(k, now, lease, batches)) {
        more = true;
        resumeAt = k.slot();
        break;
      }
    }
    timers.cursor(resumeAt);
    batches.timeouts().forEach(timeout -> output.emit(timeout, now));
    return more;
  }

  /** Expires the device of slot key {@code k} as far as the lease goes; false if the lease ran out. */
  private boolean expireDevice(SlotKey k, long now, PunctuationBudget.Lease lease, TimeoutBatcher batches) {
    Bytes deviceKey = Bytes.wrap(WheelCodec.device(k.userId(), k.deviceId()));
    byte[] raw = timers.raw(deviceKey);
    DeviceTimers state;
    try {
      state = timers.decode(raw);
    } catch (RuntimeException e) {
      // A record that cannot be read would fail this slot at every round: out of the wheel, bytes kept.
      output.quarantine(names.devices(), deviceKey.get(), raw, k.userId(), e, now);
      timers.removeDevice(deviceKey);
      timers.removeSlot(Bytes.wrap(WheelCodec.slot(k.slot(), k.userId(), k.deviceId())));
      return true;
    }
    Set<Long> slots = state.slots();
    long dueSeqs = state.dueSeqs(k.slot());
    long allowed = Math.min(Math.max(1, dueSeqs), budget.remainingRecords());
    if (allowed <= 0 || !lease.take(allowed)) {
      lease.take(1); // marks the lease exhausted
      return false;
    }
    DeviceTimers.Expired expired = state.expire(k.slot(), now, policy, allowed);
    long gone = 0;
    for (DeviceTimers.TimedOut t : expired.timeouts()) {
      batches.add(k.userId(), k.deviceId(), t.run(), t.isFinal());
      gone += t.isFinal() ? t.run().size() : 0;
    }
    if (!slots.contains(k.slot())) {
      timers.removeSlot(Bytes.wrap(WheelCodec.slot(k.slot(), k.userId(), k.deviceId())));
    }
    timers.write(k.userId(), k.deviceId(), deviceKey, slots, state, -gone);
    return !expired.rest();
  }

  /** A slice of the rolling scan of the device records ({@link AckedSweep}), within the round's lease. */
  private void sweepAcked(long now, PunctuationBudget.Lease lease) {
    if (!ackedSweep.due(now)) {
      return;
    }
    List<KeyValue<Bytes, byte[]>> old;
    try (KeyValueIterator<Bytes, byte[]> it = timers.devicesFrom(ackedSweep.from())) {
      old = ackedSweep.slice(it, now, () -> lease.take(1));
    }
    for (KeyValue<Bytes, byte[]> kv : old) {
      try {
        WheelCodec.decodeHeader(kv.value);
      } catch (RuntimeException e) {
        output.quarantine(names.devices(), kv.key.get(), kv.value, null, e, now);
      }
      timers.removeDevice(kv.key);
    }
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
