package dev.impipe.ack.wheel;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.ack.wheel.WheelCodec.Pending;
import dev.impipe.ack.wheel.WheelCodec.WheelKey;
import dev.impipe.avro.Ack;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.Delivery;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.runtime.streams.StoredValues;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
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
 * The time wheel of one partition: {@link Delivery} records arm a timer, cumulative {@link Ack} records disarm every
 * timer of the device up to their seq, and a wall-clock punctuator expires the overdue slots in key order.
 *
 * <p>The wheel has {@value #SLOTS_PER_TICK} slots per tick. A deadline {@code d} lands in slot {@code ceil(d / slot)},
 * so an entry never fires before its deadline; the punctuator, anchored on slot boundaries and run once per slot, at
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
  /**
   * Slots per tick: a deadline waits for the end of its slot, a quarter tick at most, which leaves the rest of the
   * tick for reading the inputs up to the slot's mark and committing, so a timeout is emitted within one tick of its
   * deadline (DESIGN's bound). With whole-tick slots the rounding alone used the tick up (lateness p99 1,147 ms at a
   * 1 s tick in {@code bench ackwheel}).
   */
  static final int SLOTS_PER_TICK = 4;

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AckWheelProcessor.class);

  private final AckTimeoutConfig config;
  private final PunctuationBudget budget;
  private final AckWheelMetrics metrics;
  /** Width of one slot, and the period of the punctuator. */
  private final long slotMs;
  private final long timeoutMs;

  private ProcessorContext<Object, Object> context;
  /** Where the rolling scan of {@code ack-acked} goes on (null: start over), and when the last one finished. */
  private Bytes ackedScanFrom;
  private long ackedScanDone = Long.MIN_VALUE;
  private KeyValueStore<Bytes, byte[]> pendingStore;
  private KeyValueStore<Bytes, byte[]> wheelStore;
  private KeyValueStore<Bytes, byte[]> ackedStore;
  private AtomicLong pending;
  private String taskId;
  /** Every slot below it is empty; lowered when a delivery lands in an older slot. Not persisted: a restart
   * scans from the beginning once. */
  private long cursor = Long.MIN_VALUE;
  private Cancellable catchUp;
  /** How far each input of this task has been read. */
  private final InputClock deliveriesRead;
  private final InputClock acksRead;
  private final InputLag inputLag;
  private int partition;
  /** End offsets noted by the rounds, oldest first, until both inputs are processed up to them. */
  private final ArrayDeque<Mark> marks = new ArrayDeque<>();
  /** The time of the newest mark both inputs have been processed up to. */
  private long readUpTo = Long.MIN_VALUE;
  /** What the last round's ends told for each input (see {@link #marked()}). */
  private OptionalLong deliveriesState = OptionalLong.empty();
  private OptionalLong acksState = OptionalLong.empty();
  /** Re-checks the marks between rounds while some are not reached yet. */
  private Cancellable recheck;

  /**
   * @param budget shared by the wheels of all tasks of the app: bounds what one stream thread expires per window
   * @param deliveriesTopic the deliveries topic, whose partition of this task {@code inputLag} is asked about
   * @param acksTopic likewise for the ACKs
   * @param inputLag how far the stream thread's consumer is behind an input partition's end
   */
  public AckWheelProcessor(AckTimeoutConfig config, AckWheelMetrics metrics, PunctuationBudget budget,
      String deliveriesTopic, String acksTopic, InputLag inputLag) {
    this.config = config;
    this.budget = budget;
    this.metrics = metrics;
    this.slotMs = slotMs(config);
    this.timeoutMs = config.timeout().toMillis();
    this.deliveriesRead = new InputClock(deliveriesTopic);
    this.acksRead = new InputClock(acksTopic);
    this.inputLag = inputLag;
  }

  @Override
  public void init(ProcessorContext<Object, Object> ctx) {
    this.context = ctx;
    this.pendingStore = ctx.getStateStore(AckWheelTopology.PENDING_STORE);
    this.wheelStore = ctx.getStateStore(AckWheelTopology.WHEEL_STORE);
    this.ackedStore = ctx.getStateStore(AckWheelTopology.ACKED_STORE);
    this.taskId = ctx.taskId().toString();
    this.partition = ctx.taskId().partition();
    this.pending = metrics.pendingOf(taskId);
    // RocksDB's estimate after a restore; exact deltas from here on.
    pending.set(pendingStore.approximateNumEntries());
    deliveriesRead.start(ctx.currentSystemTimeMs());
    acksRead.start(ctx.currentSystemTimeMs());
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
      deliveriesRead.read(context.currentSystemTimeMs(), record.timestamp(), offset());
    } else if (value instanceof Ack ack) {
      onAck(record.key(), ack);
      acksRead.read(context.currentSystemTimeMs(), record.timestamp(), offset());
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
    int attempts = Math.max(1, delivery.getAttempt());
    long firstPushedAt = pushedAt;
    Bytes pendingKey = Bytes.wrap(WheelCodec.pending(user, device, seq));
    byte[] old = pendingStore.get(pendingKey);
    if (old != null) {
      // A redelivery: the new push restarts the clock, the history (first push, attempts) is kept.
      Pending previous = WheelCodec.decodePendingValue(old);
      remove(wheelStore, Bytes.wrap(WheelCodec.wheel(previous.slot(), user, device, seq)));
      firstPushedAt = Math.min(previous.firstPushedAt(), pushedAt);
      attempts = Math.max(previous.attempts(), attempts);
    } else {
      pending.incrementAndGet();
    }
    arm(user, device, seq, new Pending(slot, firstPushedAt, deadline, attempts));
  }

  private void onAck(String key, Ack ack) {
    String user = ack.getUserId();
    String device = ack.getDeviceId();
    requireRouted(key, user, device);
    long seq = ack.getSeq();
    Bytes deviceKey = Bytes.wrap(WheelCodec.device(user, device));
    byte[] previous = ackedStore.get(deviceKey);
    long previousSeq = previous == null ? Long.MIN_VALUE : WheelCodec.decodeSeqValue(previous);
    if (previous == null || seq >= previousSeq) {
      // The time of the ACK keeps the entry for IM_ACK_ACKED_RETENTION from the device's last ACK.
      ackedStore.put(deviceKey, WheelCodec.ackedValue(Math.max(seq, previousSeq), context.currentSystemTimeMs()));
    }
    // Cumulative: every pending seq <= the ACKed one on this device, found by a range of the device's prefix. It
    // starts after the device's previous ACK: nothing at or below that is pending (that ACK removed it, and a
    // delivery of such a seq is ignored), and starting lower made every ACK step over the RocksDB tombstones of all
    // the device's earlier ACKed seqs (the range seek was the stream thread's hot spot at --rate max). A repeated
    // or older ACK scans nothing.
    if (previous != null && (previousSeq == Long.MAX_VALUE || seq <= previousSeq)) {
      return;
    }
    List<KeyValue<Bytes, byte[]>> done = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> it = pendingStore.range(
        Bytes.wrap(WheelCodec.pending(user, device, previous == null ? Long.MIN_VALUE : previousSeq + 1)),
        Bytes.wrap(WheelCodec.pending(user, device, seq)))) {
      it.forEachRemaining(done::add);
    }
    for (KeyValue<Bytes, byte[]> entry : done) {
      Pending p = WheelCodec.decodePendingValue(entry.value);
      long ackedSeq = WheelCodec.decodePending(entry.key.get()).seq();
      remove(pendingStore, entry.key);
      remove(wheelStore, Bytes.wrap(WheelCodec.wheel(p.slot(), user, device, ackedSeq)));
      pending.decrementAndGet();
    }
  }

  /**
   * Up to which time the input is known to have been read. When the broker's end offsets and the consumer's
   * positions tell for both of the task's inputs (deliveries, ACKs) whether records are unprocessed ({@link
   * InputLag}): every round of the wheel notes the end offsets with its wall time (a mark), and the horizon is the
   * time of the newest mark both inputs have been processed up to (never more than the grace behind the wall clock):
   * every record written before it has been processed, however fresh or old the records look. Otherwise, by record
   * times, for each input: the wall clock while the input is caught up (a record was read just now, and the last
   * record of every active input was read within the tolerance of being produced) or idle (no record of either for
   * {@link AckTimeoutConfig#inputIdleMs()}); while one lags (a backlog), the smaller of the active inputs' newest
   * record times (an input idle for that long is left out), but never more than the grace behind the wall clock. A
   * slot expires only once this has passed its end, so an ACK produced before its deadline but still in the backlog
   * is read first, even while fresh deliveries are read ahead of it.
   *
   * <p>This used to follow the ACKs alone, idle after one tolerance (1 s) without an ACK: under load a stream thread
   * that paused a second between two ACKs of a lagging task (a commit, its other tasks) took the backlog for silence
   * and fired every overdue slot by the wall clock with the ACKs still unread (the push benchmark: 25,037 timeouts,
   * every one for a seq its device had ACKed at once, emitted 4 s after the deadline at the median, up to 35 s).
   *
   * @param ask whether to ask for the end offsets now (a slot-boundary round) or only to check the marks noted so
   *     far against what has been processed since (the re-checks between rounds: no request)
   */
  long inputHorizon(long now, boolean ask) {
    long grace = config.inputGrace().toMillis();
    if (ask) {
      Optional<InputLag.Ends> deliveries = inputLag.ends(deliveriesRead.topic, partition, now);
      Optional<InputLag.Ends> acks = inputLag.ends(acksRead.topic, partition, now);
      deliveriesState = deliveriesRead.state(deliveries);
      acksState = acksRead.state(acks);
      if (marked()) {
        marks.addLast(new Mark(now, deliveries.get().end(), acks.get().end()));
      }
      while (!marks.isEmpty() && marks.peekFirst().time() < now - grace) {
        marks.pollFirst(); // the grace bounds the horizon anyway
      }
    }
    if (marked()) {
      while (!marks.isEmpty() && marks.peekFirst().processedBy(deliveriesRead.offset, acksRead.offset)) {
        readUpTo = Math.max(readUpTo, marks.pollFirst().time());
      }
      return Math.max(readUpTo, now - grace);
    }
    long tolerance = config.inputLagToleranceMs();
    long idle = config.inputIdleMs();
    boolean deliveries = holdsBack(deliveriesState, deliveriesRead, now, idle);
    boolean acks = holdsBack(acksState, acksRead, now, idle);
    boolean current =
        (deliveries && now - deliveriesRead.wall < tolerance) || (acks && now - acksRead.wall < tolerance);
    if (!deliveries && !acks
        || current && (!deliveries || deliveriesRead.fresh(tolerance)) && (!acks || acksRead.fresh(tolerance))) {
      return now;
    }
    // A watermark: each input still active has been read up to its newest record time, so both up to the smaller.
    long watermark = Math.min(deliveries ? deliveriesRead.time : Long.MAX_VALUE,
        acks ? acksRead.time : Long.MAX_VALUE);
    return Math.max(watermark, now - grace);
  }

  /** Whether the last round's ends told for both inputs: then the marks decide the horizon. */
  private boolean marked() {
    return deliveriesState.isPresent() && acksState.isPresent();
  }

  /** End offsets of both inputs asked at wall time {@code time}. */
  private record Mark(long time, long deliveriesEnd, long acksEnd) {
    /** Whether both inputs are processed up to these ends: every record written before {@code time} is. */
    boolean processedBy(long deliveriesOffset, long acksOffset) {
      return deliveriesOffset + 1 >= deliveriesEnd && acksOffset + 1 >= acksEnd;
    }
  }

  /**
   * Whether an input may still hold records older than the wall clock: when the broker and the consumer can tell,
   * records not processed yet always hold the horizon back, however long nothing was read (a busy thread is not a
   * quiet input), and an input whose every record is processed holds nothing back (no idle wait after the load
   * stops); otherwise an input holds back while read within the idle time.
   */
  private static boolean holdsBack(OptionalLong unprocessed, InputClock input, long now, long idle) {
    if (unprocessed.isPresent()) {
      return unprocessed.getAsLong() > 0;
    }
    return input.active(now, idle);
  }

  /** How far one input (the task's deliveries or its ACKs) has been read. */
  private static final class InputClock {
    final String topic;
    /** Newest record time read; MIN_VALUE before the first. */
    long time = Long.MIN_VALUE;
    /** Wall time of the last record read, or the task's start. */
    long wall;
    /** How far behind the wall clock the last record read was. */
    long lag = Long.MAX_VALUE;

    /** Offset of the last record processed in this task; -1 before the first. */
    long offset = -1;

    InputClock(String topic) {
      this.topic = topic;
    }

    void start(long now) {
      wall = now;
    }

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

    /** Read within the idle time: a backlog may still be behind it. */
    boolean active(long now, long idleMs) {
      return now - wall < idleMs;
    }

    /** The last record read was produced within the tolerance of being read. */
    boolean fresh(long tolerance) {
      return lag <= tolerance;
    }
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
    boolean waiting = marked() && !marks.isEmpty();
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
    if (cursor > nowSlot) {
      return false;
    }
    List<WheelKey> due = new ArrayList<>();
    List<byte[]> undecodable = new ArrayList<>();
    boolean more = false;
    try (KeyValueIterator<Bytes, byte[]> it = wheelStore.range(
        Bytes.wrap(WheelCodec.slotStart(cursor)), Bytes.wrap(WheelCodec.slotStart(nowSlot + 1)))) {
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
      cursor = nowSlot + 1;
    } else if (!due.isEmpty()) {
      cursor = due.get(due.size() - 1).slot();
    }
    for (byte[] key : undecodable) {
      quarantine(AckWheelTopology.WHEEL_STORE, key, key, null, new IllegalArgumentException("not a wheel key"),
          now);
      remove(wheelStore, Bytes.wrap(key));
    }

    Map<Batch, BatchBuilder> batches = new LinkedHashMap<>();
    for (WheelKey k : due) {
      remove(wheelStore, Bytes.wrap(WheelCodec.wheel(k.slot(), k.userId(), k.deviceId(), k.seq())));
      Bytes pendingKey = Bytes.wrap(WheelCodec.pending(k.userId(), k.deviceId(), k.seq()));
      byte[] raw = pendingStore.get(pendingKey);
      if (raw == null) {
        continue;
      }
      Pending p;
      try {
        p = WheelCodec.decodePendingValue(raw);
      } catch (RuntimeException e) {
        // A timer that cannot be read would fail this slot at every round: out of the wheel, bytes kept.
        quarantine(AckWheelTopology.PENDING_STORE, pendingKey.get(), raw, k.userId(), e, now);
        remove(pendingStore, pendingKey);
        pending.decrementAndGet();
        continue;
      }
      if (p.slot() != k.slot()) {
        continue;
      }
      if (p.deadline() > now) {
        // Armed by a wheel with wider slots (an earlier build, or a larger IM_ACK_TICK): the slot number read with
        // this wheel's width ends before the deadline. Never early: back in at the slot of its deadline.
        arm(k.userId(), k.deviceId(), k.seq(),
            new Pending(slotOf(p.deadline()), p.firstPushedAt(), p.deadline(), p.attempts()));
        continue;
      }
      boolean isFinal = p.attempts() >= config.maxAttempts();
      if (isFinal) {
        remove(pendingStore, pendingKey);
        pending.decrementAndGet();
      } else {
        // Ask for a redelivery and give the next attempt a full timeout of its own.
        long deadline = now + timeoutMs;
        arm(k.userId(), k.deviceId(), k.seq(),
            new Pending(slotOf(deadline), p.firstPushedAt(), deadline, p.attempts() + 1));
      }
      batches.computeIfAbsent(new Batch(k.userId(), k.deviceId(), p.attempts(), isFinal), b -> new BatchBuilder())
          .add(k.seq(), p);
    }
    batches.forEach((batch, builder) -> emit(batch, builder, now));
    return more;
  }

  /**
   * The rolling scan of {@code ack-acked}: removes devices not ACKed for the retention, a slice per punctuation
   * (bounded by the lease and {@link #ACKED_SCAN_PER_RUN}); a full pass starts at most once per retention/10.
   */
  private void sweepAcked(long now, PunctuationBudget.Lease lease) {
    long retention = config.ackedRetention().toMillis();
    if (ackedScanFrom == null && ackedScanDone != Long.MIN_VALUE && now - ackedScanDone < retention / 10) {
      return;
    }
    List<Bytes> old = new ArrayList<>();
    Bytes last = null;
    boolean finished = true;
    try (KeyValueIterator<Bytes, byte[]> it = ackedStore.range(ackedScanFrom, null)) {
      int seen = 0;
      while (it.hasNext()) {
        if (seen++ >= ACKED_SCAN_PER_RUN) {
          finished = false;
          break;
        }
        KeyValue<Bytes, byte[]> kv = it.next();
        last = kv.key;
        long ackedAt;
        try {
          ackedAt = WheelCodec.decodeAckedAt(kv.value);
        } catch (RuntimeException e) {
          ackedAt = 0; // an unreadable entry only ever helped ignore a late delivery: let it go
        }
        if (now - ackedAt >= retention) {
          if (!lease.take(1)) {
            finished = false;
            break;
          }
          old.add(kv.key);
        }
      }
    }
    old.forEach(k -> remove(ackedStore, k));
    if (finished) {
      ackedScanFrom = null;
      ackedScanDone = now;
    } else if (last != null) {
      ackedScanFrom = last;
    }
  }

  private void quarantine(String store, byte[] key, byte[] stored, String user, RuntimeException e, long now) {
    LOG.warn("Entry of {} does not decode; moved to the rejected topic", store, e);
    StoredValues.Undecodable bad = StoredValues.undecodable(stored, e);
    context.forward(StoredValues.rejected(store, key, user, bad, now), AckWheelTopology.REJECTED_SINK);
  }

  private void emit(Batch batch, BatchBuilder builder, long now) {
    List<Long> seqs = new ArrayList<>(builder.seqs);
    seqs.sort(null);
    AckTimeout timeout = AckTimeout.newBuilder()
        .setUserId(batch.userId())
        .setDeviceId(batch.deviceId())
        .setSeqs(seqs)
        .setFirstPushedAt(Instant.ofEpochMilli(builder.firstPushedAt))
        .setDeadline(Instant.ofEpochMilli(builder.deadline))
        .setAttempts(batch.attempts())
        .build();
    RecordHeaders headers = new RecordHeaders();
    headers.add(AckWheelTopology.FINAL_HEADER,
        Boolean.toString(batch.isFinal()).getBytes(StandardCharsets.UTF_8));
    context.forward(new Record<>(batch.userId(), timeout, now, headers), AckWheelTopology.TIMEOUTS_SINK);
    metrics.timeoutEmitted(batch.isFinal(), seqs.size(), now - builder.deadline);
  }

  private void arm(String user, String device, long seq, Pending p) {
    pendingStore.put(Bytes.wrap(WheelCodec.pending(user, device, seq)), WheelCodec.pendingValue(p));
    wheelStore.put(Bytes.wrap(WheelCodec.wheel(p.slot(), user, device, seq)), WheelCodec.EMPTY);
    if (p.slot() < cursor) {
      cursor = p.slot();
    }
  }

  /** The first slot boundary at or after {@code deadline}: a timer never fires early. */
  private long slotOf(long deadline) {
    return Math.floorDiv(deadline + slotMs - 1, slotMs);
  }

  /** The slot width for {@code config}: a {@value #SLOTS_PER_TICK}th of the tick, at least 1 ms. */
  static long slotMs(AckTimeoutConfig config) {
    return Math.max(1, config.tick().toMillis() / SLOTS_PER_TICK);
  }

  /**
   * Deletes {@code key}. A put of null is a delete (a tombstone in the changelog) without {@code delete}'s read of the
   * old value: RocksDBStore#delete looks the key up first, so each ACKed seq paid two extra memtable searches
   * ({@code bench ackwheel --rate max} profile: delete 17.9% of the stream thread, half of it that lookup).
   */
  private static void remove(KeyValueStore<Bytes, byte[]> store, Bytes key) {
    store.put(key, null);
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

  /** What one AckTimeout record groups: a device's seqs expiring in one round with the same attempt count. */
  private record Batch(String userId, String deviceId, int attempts, boolean isFinal) {}

  private static final class BatchBuilder {
    private final List<Long> seqs = new ArrayList<>();
    private long firstPushedAt = Long.MAX_VALUE;
    private long deadline = Long.MAX_VALUE;

    void add(long seq, Pending p) {
      seqs.add(seq);
      firstPushedAt = Math.min(firstPushedAt, p.firstPushedAt());
      deadline = Math.min(deadline, p.deadline());
    }
  }
}
