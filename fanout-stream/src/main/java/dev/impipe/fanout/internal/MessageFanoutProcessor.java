package dev.impipe.fanout.internal;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.runtime.domain.HistoryKey;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.streams.RejectedRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Write diffusion: one inbox entry per recipient of each message / read marker / recall, keyed by the recipient's
 * user id. Everything is validated before the first forward. A rejected record produces no fan-out; when it is a
 * refusal (a non-member's post, a recall of someone else's or an unknown message) its sender gets one REJECTED entry.
 */
public final class MessageFanoutProcessor implements Processor<String, ChatMessage, String, SpecificRecord> {

  /** History attribute of a recalled message: the messageId of the RECALL that withdrew it. */
  public static final String RECALLED_ATTRIBUTE = FanoutPlanner.RECALLED_ATTRIBUTE;

  private final FanoutConfig config;
  private final FanoutMetrics metrics;
  private final FanoutNames names;
  private ProcessorContext<String, SpecificRecord> context;
  private KeyValueStore<Bytes, byte[]> members;
  private RetryGate retries;
  private WindowStore<Bytes, byte[]> sent;
  private TaskClock clock;
  private KeyValueStore<String, byte[]> groups;
  private MembershipRules membership;
  private WindowStore<Bytes, byte[]> pastMembers;
  private ModeSwitchRounds switches;

  public MessageFanoutProcessor(FanoutConfig config, FanoutMetrics metrics, FanoutNames names) {
    this.config = config;
    this.metrics = metrics;
    this.names = names;
  }

  @Override
  public void init(ProcessorContext<String, SpecificRecord> context) {
    this.context = context;
    this.members = context.getStateStore(names.membersStore());
    if (retries != null) {
      retries.reset();
    }
    // Built again from the store: a task revived after an aborted transaction re-initializes its processors.
    this.retries = new RetryGate(config, metrics, context.getStateStore(names.dedupeStore()));
    this.sent = context.getStateStore(names.sentStore());
    this.clock = new TaskClock(context.getStateStore(names.clockStore()));
    this.groups = context.getStateStore(names.groupsStore());
    this.pastMembers = context.getStateStore(names.pastMembersStore());
    this.switches = new ModeSwitchRounds(context.getStateStore(names.modeSwitchesStore()), members, metrics);
    this.membership = new MembershipRules(metrics, members, groups, clock, pastMembers, switches,
        config.groupMaxMembers());
    // The rest of each switch to read diffusion, a bounded round at a time (see ModeSwitchRounds).
    context.schedule(config.modeSwitchInterval(), PunctuationType.WALL_CLOCK_TIME,
        now -> switches.round(config.maxEntriesPerRound(), this::toInbox));
  }

  /** A record of its own (a punctuation has no input record): {@code entry} into {@code user}'s inbox. */
  private void toInbox(String user, InboxEntry entry, long timestamp) {
    context.forward(new Record<String, SpecificRecord>(user, entry, timestamp), names.inboxSink());
  }

  @Override
  public void close() {
    if (retries != null) {
      retries.reset();
    }
  }

  @Override
  public void process(Record<String, ChatMessage> record) {
    long seq = context.recordMetadata().map(RecordMetadata::offset).orElse(-1L);
    // Whatever comes of it, a join processed after this record takes effect after it (TaskClock#joinBoundary).
    clock.processed(seq);
    if (record.value() != null && isMembership(record.value().getType())) {
      // A control record: not a message, so history shows nothing at its seq.
      try {
        applyMembership(record, seq);
      } finally {
        nothingInHistory(record.key(), seq, record);
      }
      return;
    }
    try {
      if (!fanOut(record, seq)) {
        nothingInHistory(record.key(), seq, record);
      }
    } catch (RejectedRecord e) {
      nothingInHistory(record.key(), seq, record);
      throw e;
    }
  }

  private static boolean isMembership(dev.impipe.avro.MessageType type) {
    return type == dev.impipe.avro.MessageType.JOIN || type == dev.impipe.avro.MessageType.LEAVE;
  }

  /**
   * A JOIN / LEAVE written into the conversation's log (by ingest, for a user's request): applied in the log's order,
   * so a message acknowledged after it is fanned out after it, whatever the producers' clocks say. An applied change
   * is also written to {@code im.group-members} (header {@link MembershipProcessor#DERIVED_HEADER}) for the consumers
   * of that topic; this processor's own membership input skips it.
   */
  private void applyMembership(Record<String, ChatMessage> record, long seq) {
    ChatMessage m = record.value();
    validate(record.key(), m);
    MembershipChange change = MembershipChange.newBuilder()
        .setGroupId(m.getGroupId())
        .setUserId(m.getMemberId())
        .setOp(m.getType() == dev.impipe.avro.MessageType.JOIN ? MembershipOp.JOIN : MembershipOp.LEAVE)
        .setAt(m.getSentAt())
        .setActorId(m.getSenderId())
        .setClientMsgId(m.getClientMsgId())
        .build();
    boolean changed = membership.apply(change, seq, record.timestamp(),
        (user, entry) -> context.forward(record.withKey(user).withValue(entry), names.inboxSink()));
    if (changed) {
      Headers headers = new RecordHeaders().add(MembershipProcessor.DERIVED_HEADER,
          Long.toString(seq).getBytes(StandardCharsets.UTF_8));
      context.forward(record.withKey(m.getGroupId()).withValue((SpecificRecord) change).withHeaders(headers),
          names.groupMembersSink());
    }
  }

  /**
   * A tombstone at this seq in the history topic: history shows nothing here, and the history store still learns
   * that the conversation's log got this far (what a {@code minSeq} read waits for). Like a refusal's REJECTED entry
   * it is forwarded before the dead letter, in the same transaction.
   */
  private void nothingInHistory(String conversationId, long seq, Record<String, ChatMessage> record) {
    if (conversationId != null && !conversationId.isEmpty() && seq >= 0) {
      context.forward(record.withKey(HistoryKey.of(conversationId, seq)).withValue((SpecificRecord) null),
          names.historySink());
    }
  }

  /** Fans the record out; false when it was a duplicate. */
  private boolean fanOut(Record<String, ChatMessage> record, long seq) {
    ChatMessage m = record.value();
    if (m == null) {
      throw reject("message without a value (tombstone)");
    }
    validate(record.key(), m);
    long timestamp = record.timestamp();
    // The conversation is part of the key: the same clientMsgId in two chats is two messages.
    Bytes dedupeKey = SentCodec.dedupeKey(m.getSenderId(), m.getConversationId(), m.getClientMsgId());
    if (retries.seen(dedupeKey, timestamp)) {
      return false;
    }
    FanoutPlanner.Plan plan = plan(m, timestamp);
    if (plan.refusal() != null) {
      // The sender's devices learn of it; then the dead letter (same transaction, see RejectedRecord).
      context.forward(record.withKey(m.getSenderId()).withValue(plan.refusal().entryFor(m, seq)), names.inboxSink());
      metrics.inboxEntriesWritten(1);
      throw reject(plan.refusal().code(), plan.refusal().reason());
    }
    // All checks passed: from here on, state changes and output.
    retries.put(dedupeKey, m.getMessageId(), timestamp);
    FanoutPlanner.Route route = m.getConversationType() == ConversationType.GROUP
        ? groupMode(record, m, seq, plan) : new FanoutPlanner.Route(true, false);
    // The (possibly large) member scan only now that the entries are really written.
    List<String> users = new ArrayList<>(route.members() ? recipients(m, plan.audience(), timestamp) : List.of());
    if (route.timeline()) {
      users.add(Ids.groupTimeline(m.getGroupId()));
    }
    if (plan.type() == InboxEntryType.MESSAGE) {
      // Where the copies went decides where a recall of it must go (FanoutPlanner#route).
      char mode = route.timeline() ? FanoutPlanner.TIMELINE : FanoutPlanner.WRITE_DIFFUSED;
      sent.put(SentCodec.sentKey(m.getMessageId()), SentCodec.sentValue(new SentCodec.Sent(m.getSenderId(),
          m.getConversationId(), clock.tick(), mode, seq, m.getSentAt().toEpochMilli(), m.getClientMsgId())),
          timestamp);
    }
    for (String user : users) {
      context.forward(record.withKey(user).withValue(FanoutPlanner.entry(m, user, plan.type(), seq)),
          names.inboxSink());
    }
    // History holds what was accepted, at its conversation seq; a recall also replaces the original there.
    context.forward(record.withKey(HistoryKey.of(m.getConversationId(), seq)).withValue(m), names.historySink());
    if (plan.historyOverwrite() != null) {
      context.forward(record.withKey(plan.historyOverwrite().key).withValue(plan.historyOverwrite().value),
          names.historySink());
    }
    metrics.messages().increment();
    metrics.inboxEntriesWritten(users.size());
    return true;
  }

  /** Reads what the planner needs to know about {@code m}: whether its sender is a member, or what it recalls. */
  private FanoutPlanner.Plan plan(ChatMessage m, long timestamp) {
    boolean group = m.getConversationType() == ConversationType.GROUP;
    boolean senderIsMember = !group || m.getType() == dev.impipe.avro.MessageType.RECALL
        || members.get(MemberKeys.key(m.getGroupId(), m.getSenderId())) != null;
    SentCodec.Sent original = null;
    if (m.getType() == dev.impipe.avro.MessageType.RECALL) {
      long from = FanoutPlanner.recallFrom(timestamp, config.recallWindow());
      try (WindowStoreIterator<byte[]> it = sent.fetch(SentCodec.sentKey(m.getRefMessageId()), from,
          Long.MAX_VALUE)) {
        original = it.hasNext() ? SentCodec.decodeSent(it.next().value) : null;
      }
    }
    return FanoutPlanner.plan(m, senderIsMember, original, config.recallWindow());
  }

  /**
   * Hybrid diffusion. A group at or above the threshold is large: its MESSAGE and RECALL records go once to the
   * group's own timeline ({@code #groupId} in the inbox topic) instead of once per member; members read it from
   * there ({@link FanoutPlanner#route}). The mode changes only here, at this message's conversation seq, and every
   * member is told with a CONVERSATION_MODE entry from that seq on, so no member misses or doubly receives a message
   * around the switch.
   *
   * <p>A switch to read diffusion tells at most {@code IM_FANOUT_MAX_ENTRIES_PER_ROUND} members here, the others in
   * later rounds ({@link ModeSwitchRounds}). Meanwhile the group is large: its messages go to the timeline only, and a
   * member told later reads them there from the switch's seq, as one told at once does (only later). Until the last
   * round is done the mode does not change again. A switch back to write diffusion is written at once: the group has
   * fewer members than the threshold then, as many entries as each of its messages costs from then on.
   */
  private FanoutPlanner.Route groupMode(Record<String, ChatMessage> record, ChatMessage m, long seq,
      FanoutPlanner.Plan plan) {
    GroupState group = GroupState.decode(groups.get(m.getGroupId()));
    boolean large = FanoutPlanner.large(group, config.largeGroupThreshold(), switches.pending(m.getGroupId()));
    if (large != group.large()) {
      ModeSwitch change = new ModeSwitch(seq, clock.tick(), m.getSentAt().toEpochMilli(), record.timestamp(), large,
          null);
      switches.start(m.getGroupId(), change, large ? config.maxEntriesPerRound() : Integer.MAX_VALUE,
          (user, entry, timestamp) -> context.forward(record.withKey(user).withValue(entry), names.inboxSink()));
      metrics.modeSwitches().increment();
      // Written only when the mode changes: the boundary of a later join is the task's (TaskClock#processed).
      groups.put(m.getGroupId(), group.withLarge(large).encode());
    }
    FanoutPlanner.Route route = FanoutPlanner.route(plan.type(), large, plan.recalledMode());
    if (route.savesWrites()) {
      metrics.writesSaved().increment(Math.max(0, group.members() - 1));
    }
    return route;
  }

  /** The users {@code audience} names, reading the member stores for a group's. */
  private List<String> recipients(ChatMessage m, FanoutPlanner.Audience audience, long timestamp) {
    if (audience.listed() != null) {
      return audience.listed();
    }
    if (!audience.pastMembers()) {
      return groupMembers(m.getGroupId(), audience.joinedBefore());
    }
    return recallRecipients(m.getGroupId(), audience.joinedBefore(),
        FanoutPlanner.recallFrom(timestamp, config.recallWindow()));
  }

  private void validate(String key, ChatMessage m) {
    String invalid = MessageChecks.invalid(key, m);
    if (invalid != null) {
      throw reject(invalid);
    }
  }

  /**
   * Everyone who was a member when the message was sent at clock {@code sentAtClock}, in or out of the group now:
   * the current members who joined before it, and every past membership covering it (left since, added back or
   * not). Past memberships are one key range of the group, read from {@code from} (the start of the recall window):
   * the cost is the group's leaves within the recall window, not its whole history.
   */
  private List<String> recallRecipients(String groupId, long sentAtClock, long from) {
    Set<String> users = new LinkedHashSet<>(groupMembers(groupId, sentAtClock));
    try (KeyValueIterator<Windowed<Bytes>, byte[]> it = pastMembers.fetch(MemberKeys.groupPrefix(groupId),
        MemberKeys.groupEnd(groupId), from, Long.MAX_VALUE)) {
      while (it.hasNext()) {
        KeyValue<Windowed<Bytes>, byte[]> period = it.next();
        if (MemberKeys.covers(period.value, sentAtClock)) {
          users.add(MemberKeys.userId(period.key.key()));
        }
      }
    }
    return List.copyOf(users);
  }

  private List<String> groupMembers(String groupId, long joinedBefore) {
    List<String> users = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> it =
        members.prefixScan(MemberKeys.groupPrefix(groupId), Serdes.Bytes().serializer())) {
      while (it.hasNext()) {
        KeyValue<Bytes, byte[]> member = it.next();
        if (MemberKeys.joinedAt(member.value) < joinedBefore) {
          users.add(MemberKeys.userId(member.key));
        }
      }
    }
    return users;
  }

  private RejectedRecord reject(String reason) {
    return reject(RejectedRecord.INVALID, reason);
  }

  private RejectedRecord reject(String code, String reason) {
    metrics.rejected().increment();
    return new RejectedRecord(code, reason);
  }
}
