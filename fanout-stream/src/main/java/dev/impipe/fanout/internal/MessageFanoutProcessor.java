package dev.impipe.fanout.internal;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.runtime.domain.HistoryKey;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.streams.RejectedRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
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
  public static final String RECALLED_ATTRIBUTE = "im.recalled-by";

  private final FanoutConfig config;
  private final FanoutMetrics metrics;
  private ProcessorContext<String, SpecificRecord> context;
  /** Set by an accepted RECALL check: the history record that replaces the original (its body removed). */
  private KeyValue<String, ChatMessage> recallOverwrite;
  /**
   * Set by an accepted RECALL check: where the original's copies went ({@link #WRITE_DIFFUSED}, {@link #TIMELINE}),
   * or 0 when the sent store did not say (a value from before the mode was kept).
   */
  private char recalledMode;
  /** Set by {@link #groupMode}: the MESSAGE goes to the group's timeline (read diffusion). */
  private boolean toTimeline;
  /** Sent-store mode: the message was copied into each recipient's inbox. */
  private static final char WRITE_DIFFUSED = 'W';
  /** Sent-store mode: the message went once to a large group's timeline. */
  private static final char TIMELINE = 'T';
  private KeyValueStore<Bytes, byte[]> members;
  private WindowStore<Bytes, byte[]> dedupe;
  private WindowStore<Bytes, byte[]> sent;
  private TaskClock clock;
  private KeyValueStore<String, byte[]> groups;
  private MembershipRules membership;
  private WindowStore<Bytes, byte[]> pastMembers;
  private ModeSwitchRounds switches;
  /** Built on the first message (see {@link #mightBeRetry}); null before, and when configured off. */
  private DedupeFilter dedupeFilter;
  private long newestTimestamp = Long.MIN_VALUE;
  /** The filter heap this processor has added to {@link FanoutMetrics#dedupeFilterBytes} so far. */
  private long reportedFilterBytes;

  public MessageFanoutProcessor(FanoutConfig config, FanoutMetrics metrics) {
    this.config = config;
    this.metrics = metrics;
  }

  @Override
  public void init(ProcessorContext<String, SpecificRecord> context) {
    this.context = context;
    this.members = context.getStateStore(FanoutTopology.MEMBERS_STORE);
    this.dedupe = context.getStateStore(FanoutTopology.DEDUPE_STORE);
    this.sent = context.getStateStore(FanoutTopology.SENT_STORE);
    this.clock = new TaskClock(context.getStateStore(FanoutTopology.CLOCK_STORE));
    this.groups = context.getStateStore(FanoutTopology.GROUPS_STORE);
    this.pastMembers = context.getStateStore(FanoutTopology.PAST_MEMBERS_STORE);
    this.switches = new ModeSwitchRounds(context.getStateStore(FanoutTopology.MODE_SWITCHES_STORE), members, metrics);
    this.membership = new MembershipRules(metrics, members, groups, clock, pastMembers, switches,
        config.groupMaxMembers());
    // The rest of each switch to read diffusion, a bounded round at a time (see ModeSwitchRounds).
    context.schedule(config.modeSwitchInterval(), PunctuationType.WALL_CLOCK_TIME,
        now -> switches.round(config.maxEntriesPerRound(), this::toInbox));
    // Built again from the store: a task revived after an aborted transaction re-initializes its processors.
    this.dedupeFilter = null;
    this.newestTimestamp = Long.MIN_VALUE;
    reportFilterBytes();
  }

  /** A record of its own (a punctuation has no input record): {@code entry} into {@code user}'s inbox. */
  private void toInbox(String user, InboxEntry entry, long timestamp) {
    context.forward(new Record<String, SpecificRecord>(user, entry, timestamp), FanoutTopology.INBOX_SINK);
  }

  @Override
  public void close() {
    dedupeFilter = null;
    reportFilterBytes();
  }

  /** Keeps the process's filter-heap gauge in step with this processor's filter. */
  private void reportFilterBytes() {
    long bytes = dedupeFilter == null ? 0 : dedupeFilter.bits() / 8;
    if (bytes != reportedFilterBytes) {
      metrics.dedupeFilterBytes(bytes - reportedFilterBytes);
      reportedFilterBytes = bytes;
    }
  }

  @Override
  public void process(Record<String, ChatMessage> record) {
    long seq = context.recordMetadata().map(RecordMetadata::offset).orElse(-1L);
    recallOverwrite = null;
    recalledMode = 0;
    toTimeline = false;
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
        (user, entry) -> context.forward(record.withKey(user).withValue(entry), FanoutTopology.INBOX_SINK));
    if (changed) {
      Headers headers = new RecordHeaders().add(MembershipProcessor.DERIVED_HEADER,
          Long.toString(seq).getBytes(StandardCharsets.UTF_8));
      context.forward(record.withKey(m.getGroupId()).withValue((SpecificRecord) change).withHeaders(headers),
          FanoutTopology.GROUP_MEMBERS_SINK);
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
          FanoutTopology.HISTORY_SINK);
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
    if (!mightBeRetry(dedupeKey, timestamp)) {
      metrics.dedupeSkipped().increment();
    } else {
      metrics.dedupeReads().increment();
      if (seen(dedupe, dedupeKey, timestamp, config.dedupeWindow().toMillis())) {
        metrics.duplicates().increment();
        return false;
      }
    }
    // Validation happens here; the (possibly large) member scan only when the entries are really written.
    Supplier<List<String>> recipients;
    try {
      recipients = switch (m.getType()) {
        case MESSAGE -> messageRecipients(m);
        case READ -> readRecipients(m);
        case RECALL -> recallRecipients(m, timestamp);
        case UNKNOWN, JOIN, LEAVE -> throw new IllegalStateException("validated: " + m.getType());
      };
    } catch (Refused refused) {
      // The sender's devices learn of it; then the dead letter (same transaction, see RejectedRecord).
      context.forward(record.withKey(m.getSenderId()).withValue(refused.refusal.entryFor(m, seq)),
          FanoutTopology.INBOX_SINK);
      metrics.inboxEntriesWritten(1);
      throw reject(refused.refusal.code(), refused.refusal.reason());
    }
    // All checks passed: from here on, state changes and output.
    dedupe.put(dedupeKey, SentCodec.dedupeValue(m.getMessageId()), timestamp);
    if (dedupeFilter != null) {
      dedupeFilter.add(dedupeKey.get(), timestamp);
      reportFilterBytes();
    }
    InboxEntryType type = switch (m.getType()) {
      case MESSAGE -> InboxEntryType.MESSAGE;
      case READ -> InboxEntryType.READ;
      case RECALL -> InboxEntryType.RECALL;
      case UNKNOWN, JOIN, LEAVE -> throw new IllegalStateException("validated: " + m.getType());
    };
    List<String> users = m.getConversationType() == ConversationType.GROUP
        ? groupMode(record, m, seq, recipients) : recipients.get();
    if (m.getType() == dev.impipe.avro.MessageType.MESSAGE) {
      // Where the copies went decides where a recall of it must go (see recallTargets).
      sent.put(SentCodec.sentKey(m.getMessageId()), SentCodec.sentValue(new SentCodec.Sent(m.getSenderId(),
          m.getConversationId(), clock.tick(), toTimeline ? TIMELINE : WRITE_DIFFUSED, seq,
          m.getSentAt().toEpochMilli(), m.getClientMsgId())), timestamp);
    }
    for (String user : users) {
      context.forward(record.withKey(user).withValue(entry(m, user, type, seq)), FanoutTopology.INBOX_SINK);
    }
    // History holds what was accepted, at its conversation seq; a recall also replaces the original there.
    context.forward(record.withKey(HistoryKey.of(m.getConversationId(), seq)).withValue(m),
        FanoutTopology.HISTORY_SINK);
    if (recallOverwrite != null) {
      context.forward(record.withKey(recallOverwrite.key).withValue(recallOverwrite.value),
          FanoutTopology.HISTORY_SINK);
    }
    metrics.messages().increment();
    metrics.inboxEntriesWritten(users.size());
    return true;
  }

  /**
   * Hybrid diffusion. A group at or above the threshold is large: its MESSAGE and RECALL records go once to the
   * group's own timeline ({@code #groupId} in the inbox topic) instead of once per member; members read it from
   * there. The mode changes only here, at this message's conversation seq, and every member is told with a
   * CONVERSATION_MODE entry from that seq on, so no member misses or doubly receives a message around the switch.
   *
   * <p>A switch to read diffusion tells at most {@code IM_FANOUT_MAX_ENTRIES_PER_ROUND} members here, the others in
   * later rounds ({@link ModeSwitchRounds}). Meanwhile the group is large: its messages go to the timeline only, and a
   * member told later reads them there from the switch's seq, as one told at once does (only later). Until the last
   * round is done the mode does not change again. A switch back to write diffusion is written at once: the group has
   * fewer members than the threshold then, as many entries as each of its messages costs from then on.
   */
  private List<String> groupMode(Record<String, ChatMessage> record, ChatMessage m, long seq,
      Supplier<List<String>> recipients) {
    GroupState group = GroupState.decode(groups.get(m.getGroupId()));
    boolean wanted = group.wantsLarge(config.largeGroupThreshold());
    boolean large = wanted != group.large() && switches.pending(m.getGroupId()) ? group.large() : wanted;
    if (large != group.large()) {
      ModeSwitch change = new ModeSwitch(seq, clock.tick(), m.getSentAt().toEpochMilli(), record.timestamp(), large,
          null);
      switches.start(m.getGroupId(), change, large ? config.maxEntriesPerRound() : Integer.MAX_VALUE,
          (user, entry, timestamp) -> context.forward(record.withKey(user).withValue(entry),
              FanoutTopology.INBOX_SINK));
      metrics.modeSwitches().increment();
      // Written only when the mode changes: the boundary of a later join is the task's (TaskClock#processed).
      groups.put(m.getGroupId(), group.withLarge(large).encode());
    }
    if (m.getType() == dev.impipe.avro.MessageType.RECALL) {
      return recallTargets(m.getGroupId(), group, large, recipients);
    }
    if (!large || m.getType() == dev.impipe.avro.MessageType.READ) {
      return recipients.get();
    }
    toTimeline = true;
    metrics.writesSaved().increment(Math.max(0, group.members() - 1));
    return List.of(Ids.groupTimeline(m.getGroupId()));
  }

  /**
   * A group RECALL goes where the original's copies are, whatever the group's mode is now: the store rewrites the
   * copy held under the RECALL's key (inbox-store's recall index), and the merged sync shows a timeline entry only
   * inside the user's read intervals but every inbox entry. So:
   * <ul>
   *   <li>copies in the recipients' inboxes (sent while the group was small): a RECALL to each of them, and none to
   *       the timeline, even when the group is large now. The timeline holds no copy, and its RECALL would be shown
   *       a second time to every member reading the timeline, and to members who never got the message;
   *   <li>one copy in the timeline, group still large: the timeline only; its members read it there;
   *   <li>one copy in the timeline, group small again: the timeline (to remove the copy; the sync does not show
   *       this entry, its seq is outside every read interval) and a RECALL to each recipient, who is told in the
   *       inbox as for any message of a small group;
   *   <li>not recorded (sent before the mode was kept): as the group's mode is now, as it always was.
   * </ul>
   */
  private List<String> recallTargets(String groupId, GroupState group, boolean large,
      Supplier<List<String>> recipients) {
    String timeline = Ids.groupTimeline(groupId);
    boolean timelineCopy = recalledMode == TIMELINE || recalledMode == 0 && large;
    if (timelineCopy && large) {
      metrics.writesSaved().increment(Math.max(0, group.members() - 1));
      return List.of(timeline);
    }
    if (!timelineCopy) {
      return recipients.get();
    }
    List<String> users = new ArrayList<>(recipients.get());
    users.add(timeline);
    return users;
  }

  private static InboxEntry entry(ChatMessage m, String user, InboxEntryType type, long seq) {
    return InboxEntry.newBuilder()
        .setUserId(user)
        .setType(type)
        .setConversationId(m.getConversationId())
        .setConversationSeq(seq)
        .setMessageId(m.getMessageId())
        .setSenderId(m.getSenderId())
        .setBody(type == InboxEntryType.MESSAGE ? m.getBody() : null)
        .setRefMessageId(m.getRefMessageId())
        .setReadUpToSeq(m.getReadUpToSeq())
        .setTimestamp(m.getSentAt())
        .build();
  }

  private void validate(String key, ChatMessage m) {
    String invalid = MessageChecks.invalid(key, m);
    if (invalid != null) {
      throw reject(invalid);
    }
  }

  private Supplier<List<String>> messageRecipients(ChatMessage m) {
    if (m.getConversationType() == ConversationType.DIRECT) {
      List<String> users = distinct(m.getRecipientId(), m.getSenderId());
      return () -> users;
    }
    if (members.get(MemberKeys.key(m.getGroupId(), m.getSenderId())) == null) {
      throw new Refused("NOT_MEMBER", "sender " + m.getSenderId() + " is not a member of group " + m.getGroupId());
    }
    return () -> groupMembers(m.getGroupId(), Long.MAX_VALUE);
  }

  private Supplier<List<String>> readRecipients(ChatMessage m) {
    if (m.getConversationType() == ConversationType.GROUP
        && members.get(MemberKeys.key(m.getGroupId(), m.getSenderId())) == null) {
      // Like any other action in a group: a non-member's read marker is refused, and history never shows it.
      throw new Refused("NOT_MEMBER", "reader " + m.getSenderId() + " is not a member of group " + m.getGroupId());
    }
    // The reader's other devices, and in a direct chat the other party (a read receipt).
    List<String> users = m.getConversationType() == ConversationType.DIRECT
        ? distinct(m.getSenderId(), m.getRecipientId()) : List.of(m.getSenderId());
    return () -> users;
  }

  private Supplier<List<String>> recallRecipients(ChatMessage m, long timestamp) {
    SentCodec.Sent original = null;
    long from = Math.max(0, timestamp - config.recallWindow().toMillis());
    try (WindowStoreIterator<byte[]> it = sent.fetch(SentCodec.sentKey(m.getRefMessageId()), from, Long.MAX_VALUE)) {
      if (it.hasNext()) {
        original = SentCodec.decodeSent(it.next().value);
      }
    }
    if (original == null) {
      throw new Refused("UNKNOWN_MESSAGE", "RECALL of unknown message " + m.getRefMessageId()
          + " (or older than the recall window " + config.recallWindow() + ")");
    }
    if (!original.senderId().equals(m.getSenderId())) {
      throw new Refused("NOT_SENDER", "RECALL of message " + m.getRefMessageId() + " by " + m.getSenderId()
          + ", but only its sender may recall it");
    }
    if (!original.conversationId().equals(m.getConversationId())) {
      throw new Refused("UNKNOWN_MESSAGE", "RECALL of message " + m.getRefMessageId() + " in conversation "
          + m.getConversationId() + ", but it was sent in another conversation");
    }
    recallOverwrite = recalled(m, original.seq(), original.sentAt(), original.clientMsgId());
    if (m.getConversationType() == ConversationType.DIRECT) {
      List<String> users = distinct(m.getRecipientId(), m.getSenderId());
      return () -> users;
    }
    // Everyone who received the original: their inbox holds it, also when they left since (added back or not).
    recalledMode = original.mode() == WRITE_DIFFUSED || original.mode() == TIMELINE ? original.mode() : 0;
    long sentAtClock = original.clock();
    return () -> recallRecipients(m.getGroupId(), sentAtClock, from);
  }

  /**
   * The history record that replaces a recalled message at its seq: the same ids and time, no body, attribute
   * {@value #RECALLED_ATTRIBUTE} = the recall's messageId. (The original stays in {@code im.messages} only.)
   */
  private static KeyValue<String, ChatMessage> recalled(ChatMessage recall, long seq, long sentAt,
      String clientMsgId) {
    ChatMessage stub = ChatMessage.newBuilder()
        .setMessageId(recall.getRefMessageId())
        .setClientMsgId(clientMsgId)
        .setConversationId(recall.getConversationId())
        .setConversationType(recall.getConversationType())
        .setType(dev.impipe.avro.MessageType.MESSAGE)
        .setSenderId(recall.getSenderId())
        .setRecipientId(recall.getRecipientId())
        .setGroupId(recall.getGroupId())
        .setBody(null)
        .setSentAt(java.time.Instant.ofEpochMilli(sentAt))
        .setAttributes(java.util.Map.of(RECALLED_ATTRIBUTE, recall.getMessageId()))
        .build();
    return KeyValue.pair(HistoryKey.of(recall.getConversationId(), seq), stub);
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

  /**
   * False when the dedupe filter knows the key was not put within the window: then the store's range read is
   * skipped. The filter is built from the store on the first message the processor sees (after restoration: what
   * the store holds then, including what an earlier run of the task put), and follows every put after that.
   */
  private boolean mightBeRetry(Bytes dedupeKey, long timestamp) {
    if (config.dedupeFilterMb() == 0) {
      return true;
    }
    long window = config.dedupeWindow().toMillis();
    if (dedupeFilter == null) {
      dedupeFilter = new DedupeFilter(window, config.dedupeFilterMb() * 8L * 1024 * 1024);
      try (KeyValueIterator<Windowed<Bytes>, byte[]> all = dedupe.all()) {
        while (all.hasNext()) {
          Windowed<Bytes> key = all.next().key;
          dedupeFilter.add(key.key().get(), key.window().start());
        }
      }
    }
    newestTimestamp = Math.max(newestTimestamp, timestamp);
    // The store keeps one window before its stream time; a record older than that reads the store.
    dedupeFilter.expireBefore(newestTimestamp - window);
    reportFilterBytes();
    return dedupeFilter.mightContain(dedupeKey.get(), timestamp);
  }

  private static boolean seen(WindowStore<Bytes, byte[]> store, Bytes key, long timestamp, long window) {
    try (WindowStoreIterator<byte[]> it = store.fetch(key, Math.max(0, timestamp - window), timestamp + window)) {
      return it.hasNext();
    }
  }

  private static List<String> distinct(String a, String b) {
    Set<String> users = new LinkedHashSet<>();
    users.add(a);
    users.add(b);
    return List.copyOf(users);
  }

  /** A well-formed request its sender may not make (thrown before any state change or output). */
  private static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Refusal refusal;

    Refused(String code, String reason) {
      super(reason, null, false, false);
      this.refusal = new Refusal(code, reason);
    }
  }

  private RejectedRecord reject(String reason) {
    return reject(RejectedRecord.INVALID, reason);
  }

  private RejectedRecord reject(String code, String reason) {
    metrics.rejected().increment();
    return new RejectedRecord(code, reason);
  }
}
