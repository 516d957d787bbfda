package dev.impipe.notify.decide;

import dev.impipe.avro.Ack;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.PushRegistration;
import dev.impipe.inbox.conversations.ConversationKeys;
import dev.impipe.inbox.conversations.ConversationState;
import dev.impipe.inbox.conversations.ConversationTotals;
import dev.impipe.notify.NotifyConfig;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.runtime.streams.StoredValues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.serialization.StringSerializer;
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
 * The shell of the notification decisions of one partition (the rules: {@link NotifyRules}, {@link PendingBurst}):
 * inbox MESSAGE entries add to the bursts of the user's registered devices that have not received them; ACKs and
 * cursor commits, READ and RECALL entries and removed registrations take messages out; a wall-clock punctuator
 * decides the due bursts, oldest first, within the stream thread's budget, and writes the notifications in the task's
 * transaction.
 */
public final class NotifyProcessor implements Processor<String, Object, Object, Object> {

  /** Longest period of the punctuator (it is a quarter of {@code IM_NOTIFY_AFTER} when that is shorter). */
  static final long MAX_PERIOD_MS = 250;

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(NotifyProcessor.class);

  private final NotifyConfig cfg;
  private final NotifyMetrics metrics;
  private final PunctuationBudget budget;
  private final BacklogProbe backlog;
  private final long afterMs;
  private final long coalesceMs;

  private ProcessorContext<Object, Object> context;
  private KeyValueStore<String, PushRegistration> registrations;
  private KeyValueStore<Bytes, byte[]> received;
  private BurstIndex bursts;
  private KeyValueStore<Bytes, byte[]> conversations;
  private KeyValueStore<Bytes, byte[]> totals;
  private String taskId;
  private Cancellable catchUp;
  private InputHorizon horizon;

  public NotifyProcessor(NotifyConfig cfg, NotifyMetrics metrics, PunctuationBudget budget, BacklogProbe backlog) {
    this.cfg = cfg;
    this.metrics = metrics;
    this.budget = budget;
    this.backlog = backlog;
    this.afterMs = cfg.after().toMillis();
    this.coalesceMs = cfg.coalesce().toMillis();
  }

  @Override
  public void init(ProcessorContext<Object, Object> ctx) {
    this.context = ctx;
    registrations = ctx.getStateStore(NotifyTopology.REGISTRATIONS_STORE);
    received = ctx.getStateStore(NotifyTopology.RECEIVED_STORE);
    conversations = ctx.getStateStore(NotifyTopology.CONVERSATIONS_STORE);
    totals = ctx.getStateStore(NotifyTopology.CONVERSATION_TOTALS_STORE);
    taskId = ctx.taskId().toString();
    KeyValueStore<Bytes, byte[]> pending = ctx.getStateStore(NotifyTopology.PENDING_STORE);
    AtomicLong pendingCount = metrics.pendingOf(taskId);
    // RocksDB's estimate after a restore; exact deltas from here on.
    pendingCount.set(pending.approximateNumEntries());
    bursts = new BurstIndex(pending, ctx.getStateStore(NotifyTopology.DUE_STORE), pendingCount, afterMs, coalesceMs,
        (store, key, stored, user, e) -> quarantine(store, key, stored, user, e, ctx.currentSystemTimeMs()));
    horizon = new InputHorizon(InputHorizon.idleMs(afterMs), ctx.currentSystemTimeMs());
    ctx.schedule(Duration.ofMillis(periodMs(cfg)), PunctuationType.WALL_CLOCK_TIME, this::punctuate);
  }

  /** The punctuator's period: a quarter of {@code IM_NOTIFY_AFTER}, at most {@value #MAX_PERIOD_MS} ms. */
  static long periodMs(NotifyConfig cfg) {
    return Math.max(1, Math.min(MAX_PERIOD_MS, cfg.after().toMillis() / 4));
  }

  @Override
  public void process(Record<String, Object> record) {
    horizon.read(context.currentSystemTimeMs(), record.timestamp());
    Object value = record.value();
    String key = record.key();
    if (value instanceof InboxEntry entry) {
      onInbox(key, entry);
    } else if (value instanceof Ack ack) {
      onReceived(key, ack.getUserId(), ack.getDeviceId(), ack.getSeq());
    } else if (value instanceof DeviceCursor c) {
      onReceived(key, c.getUserId(), c.getDeviceId(), c.getSeq());
    } else if (value instanceof PushRegistration r) {
      onRegistration(key, r);
    }
    // Tombstones (null values) carry nothing to do.
  }

  private void onInbox(String user, InboxEntry e) {
    // What the inbox store rejects (its own topology dead-letters it) is skipped here, as the conversation list does.
    if (user == null || !user.equals(e.getUserId()) || e.getType() == null || e.getConversationId() == null
        || e.getTimestamp() == null || Ids.isGroupTimeline(user)) {
      return;
    }
    String conversation = e.getConversationId();
    if (e.getType() == InboxEntryType.MESSAGE) {
      onMessage(user, conversation, e);
    } else if (e.getType() == InboxEntryType.RECALL && e.getRefMessageId() != null) {
      String recalled = e.getRefMessageId();
      forEachBurst(user, conversation, b -> b.recalled(recalled));
    } else if (e.getType() == InboxEntryType.READ && user.equals(e.getSenderId()) && e.getReadUpToSeq() != null) {
      long upTo = e.getReadUpToSeq();
      forEachBurst(user, conversation, b -> b.readUpTo(upTo));
    }
  }

  private void onMessage(String user, String conversation, InboxEntry e) {
    if (!NotifyRules.notifiable(user, e)) {
      return;
    }
    ConversationState state = conversationState(user, conversation);
    if (state != null && (state.muted() || e.getConversationSeq() <= state.readUpToSeq())) {
      return;
    }
    long seq = context.recordMetadata().map(m -> m.offset()).orElse(-1L);
    PendingBurst.Message message = new PendingBurst.Message(seq, e.getConversationSeq(), e.getMessageId(),
        e.getSenderId(), e.getTimestamp().toEpochMilli());
    String preview = NotifyRules.preview(e.getBody(), cfg.previewChars());
    for (KeyValue<String, PushRegistration> device : registrationsOf(user)) {
      String deviceId = RegistrationKeys.deviceOf(device.key);
      if (!NotifyRules.deliverable(device.value) || receivedSeq(user, deviceId) >= seq) {
        continue;
      }
      NotifyKeys.Burst target = new NotifyKeys.Burst(user, deviceId, conversation);
      PendingBurst before = bursts.load(target);
      PendingBurst base = before == null ? PendingBurst.empty() : before;
      bursts.write(target, before, base.add(message, preview, cfg.pendingTracked()), now());
    }
  }

  private void onReceived(String key, String user, String device, long seq) {
    // Malformed ACKs and cursors are the ACK wheel's and the inbox store's to reject: skipped here.
    if (user == null || device == null || device.isEmpty() || !user.equals(key)
        || user.indexOf(RegistrationKeys.SEPARATOR) >= 0 || device.indexOf(RegistrationKeys.SEPARATOR) >= 0) {
      return;
    }
    // Only registered devices are followed (the store stays the size of the registrations); a device that registers
    // later has no burst older than its registration, and its next ACK or cursor takes out what it has received.
    if (registration(RegistrationKeys.key(user, device), user) == null) {
      return;
    }
    Bytes receivedKey = NotifyKeys.received(user, device);
    if (seq <= receivedSeq(user, device)) {
      return;
    }
    received.put(receivedKey, NotifyKeys.receivedValue(seq));
    for (NotifyKeys.Burst target : bursts.of(user, device)) {
      PendingBurst before = bursts.load(target);
      if (before != null) {
        bursts.write(target, before, before.receivedUpTo(seq), now());
      }
    }
  }

  private void onRegistration(String key, PushRegistration r) {
    if (!r.getUserId().equals(key)) {
      throw RejectedRecord.invalid("record key '" + key + "' is not its userId '" + r.getUserId() + "'");
    }
    String registrationKey;
    try {
      registrationKey = RegistrationKeys.key(r.getUserId(), r.getDeviceId());
    } catch (IllegalArgumentException e) {
      throw RejectedRecord.invalid(e.getMessage());
    }
    if (!r.getRemoved()) {
      registrations.put(registrationKey, r);
      return;
    }
    PushRegistration stored = registration(registrationKey, r.getUserId());
    // A removal names the registration it removes: a late 410 for an old subscription leaves a newer one alone.
    if (stored != null && stored.getRegistrationId().equals(r.getRegistrationId())) {
      registrations.delete(registrationKey);
      received.put(NotifyKeys.received(r.getUserId(), r.getDeviceId()), null);
      for (NotifyKeys.Burst target : bursts.of(r.getUserId(), r.getDeviceId())) {
        bursts.write(target, bursts.load(target), null, now());
      }
    }
  }

  /** Applies {@code change} to the burst of each registered device of {@code user} in {@code conversation}. */
  private void forEachBurst(String user, String conversation, UnaryOperator<PendingBurst> change) {
    for (KeyValue<String, PushRegistration> device : registrationsOf(user)) {
      NotifyKeys.Burst target = new NotifyKeys.Burst(user, RegistrationKeys.deviceOf(device.key), conversation);
      PendingBurst before = bursts.load(target);
      if (before != null) {
        bursts.write(target, before, change.apply(before), now());
      }
    }
  }

  /** One punctuation: decides the due bursts the budget allows; a catch-up punctuator runs while some are left. */
  void punctuate(long now) {
    if (horizon.awaitingBacklog(now) && backlog.fetched(context.taskId().partition(), horizon.startedAt())) {
      horizon.backlogFetched(taskId, now);
    }
    boolean more;
    try (PunctuationBudget.Lease lease = budget.lease(now)) {
      BurstIndex.DueBatch batch = bursts.takeDue(horizon.at(now), lease);
      batch.due().forEach(d -> decideOne(d, now));
      more = batch.more();
    }
    if (more && catchUp == null) {
      catchUp = context.schedule(Duration.ofMillis(PunctuationBudget.DEFAULT_WINDOW_MS),
          PunctuationType.WALL_CLOCK_TIME, this::punctuate);
    } else if (!more && catchUp != null) {
      catchUp.cancel();
      catchUp = null;
    }
  }

  private void decideOne(NotifyKeys.Due d, long now) {
    NotifyKeys.Burst target = new NotifyKeys.Burst(d.userId(), d.deviceId(), d.conversationId());
    PendingBurst burst = bursts.load(target);
    if (burst == null || burst.due() != d.due()) {
      return; // moved or removed since: this entry was left behind
    }
    ConversationState state = conversationState(target.userId(), target.conversationId());
    NotifyRules.Decision decision = NotifyRules.decide(target, burst,
        registration(RegistrationKeys.key(target.userId(), target.deviceId()), target.userId()),
        state != null && state.muted(), total(target.userId()), now);
    decision.notification().ifPresent(n -> {
      context.forward(new Record<>(target.userId(), n, now), NotifyTopology.NOTIFICATIONS_SINK);
      metrics.decided();
    });
    bursts.write(target, burst.withDue(PendingBurst.NONE), decision.next(), now);
  }

  /** The registrations of {@code user}'s devices; one that does not decode goes to the rejected topic. */
  private List<KeyValue<String, PushRegistration>> registrationsOf(String user) {
    List<KeyValue<String, PushRegistration>> out = new ArrayList<>();
    if (user.indexOf(RegistrationKeys.SEPARATOR) >= 0) {
      return out; // no such user can register (the registration would be rejected)
    }
    List<KeyValue<String, StoredValues.Undecodable>> bad = new ArrayList<>();
    try (KeyValueIterator<String, PushRegistration> it = registrations.prefixScan(RegistrationKeys.prefix(user),
        new StringSerializer())) {
      while (it.hasNext()) {
        String key = it.peekNextKey();
        try {
          out.add(it.next());
        } catch (RuntimeException e) {
          StoredValues.Undecodable u = StoredValues.Undecodable.in(e);
          if (u == null) {
            throw e;
          }
          bad.add(KeyValue.pair(key, u));
        }
      }
    }
    for (KeyValue<String, StoredValues.Undecodable> b : bad) {
      quarantined(NotifyTopology.REGISTRATIONS_STORE, b.key, user, b.value);
      registrations.put(b.key, null);
    }
    return out;
  }

  /** The registration at {@code key}, or null (none, or it did not decode: then it goes to the rejected topic). */
  private PushRegistration registration(String key, String user) {
    try {
      return registrations.get(key);
    } catch (RuntimeException e) {
      StoredValues.Undecodable u = StoredValues.Undecodable.in(e);
      if (u == null) {
        throw e;
      }
      quarantined(NotifyTopology.REGISTRATIONS_STORE, key, user, u);
      registrations.put(key, null);
      return null;
    }
  }

  /** The highest seq {@code device} has received, -1 before any. */
  private long receivedSeq(String user, String device) {
    byte[] raw = received.get(NotifyKeys.received(user, device));
    if (raw == null) {
      return -1;
    }
    try {
      return NotifyKeys.decodeReceived(raw);
    } catch (RuntimeException e) {
      return -1; // only ever held notifications back: the next ACK or cursor overwrites it
    }
  }

  /** The conversation list's state of {@code conversation}, or null (none, or unreadable: not muted). */
  private ConversationState conversationState(String user, String conversation) {
    byte[] raw = conversations.get(ConversationKeys.state(user, conversation));
    try {
      return raw == null ? null : ConversationState.decode(raw);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** The user's badge, or null. */
  private Long total(String user) {
    try {
      byte[] raw = totals.get(ConversationKeys.total(user));
      return raw == null ? null : ConversationTotals.decode(raw).unread();
    } catch (RuntimeException e) {
      return null;
    }
  }

  private void quarantine(String store, byte[] key, byte[] stored, String user, RuntimeException e, long now) {
    LOG.warn("Entry of {} does not decode; moved to the rejected topic", store, e);
    context.forward(StoredValues.rejected(store, key, user, StoredValues.undecodable(stored, e), now),
        NotifyTopology.REJECTED_SINK);
  }

  private void quarantined(String store, String key, String user, StoredValues.Undecodable u) {
    LOG.warn("Entry of {} does not decode; moved to the rejected topic", store, u);
    context.forward(StoredValues.rejected(store, key.getBytes(java.nio.charset.StandardCharsets.UTF_8), user, u,
        context.currentSystemTimeMs()), NotifyTopology.REJECTED_SINK);
  }

  private long now() {
    return context.currentSystemTimeMs();
  }

  @Override
  public void close() {
    metrics.release(taskId);
  }
}
