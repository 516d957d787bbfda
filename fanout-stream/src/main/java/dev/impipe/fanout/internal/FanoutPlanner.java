package dev.impipe.fanout.internal;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MessageType;
import dev.impipe.runtime.domain.HistoryKey;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.KeyValue;

/**
 * What the fan-out of one validated MESSAGE / READ / RECALL is, decided from what the stores said (pure: the
 * processor reads the stores, then writes what the plan says). A refused record gets a {@link Plan} with its
 * {@link Refusal} and nothing else; an accepted one says who gets an entry, and for a recall where the original's
 * copies went and what replaces it in history.
 */
public final class FanoutPlanner {

  /** History attribute of a recalled message: the messageId of the RECALL that withdrew it. */
  public static final String RECALLED_ATTRIBUTE = "im.recalled-by";
  /** Sent-store mode: the message was copied into each recipient's inbox. */
  static final char WRITE_DIFFUSED = 'W';
  /** Sent-store mode: the message went once to a large group's timeline. */
  static final char TIMELINE = 'T';
  /** Sent-store mode: not recorded (a value from before the mode was kept). */
  static final char UNKNOWN_MODE = 0;

  private FanoutPlanner() {}

  /**
   * Who gets an entry: the {@code listed} users, or (when {@code listed} is null) the group's members who joined
   * before {@code joinedBefore}, plus, with {@code pastMembers}, everyone whose past membership covers that clock.
   */
  public record Audience(List<String> listed, long joinedBefore, boolean pastMembers) {
    static Audience of(List<String> users) {
      return new Audience(users, Long.MAX_VALUE, false);
    }

    static Audience members() {
      return new Audience(null, Long.MAX_VALUE, false);
    }

    /** Everyone who was a member at clock {@code sentAtClock} (in or out of the group now). */
    static Audience membersAt(long sentAtClock) {
      return new Audience(null, sentAtClock, true);
    }
  }

  /**
   * The fan-out of one record.
   *
   * @param refusal why the sender may not do this (then nothing else is set), or null
   * @param type the inbox entries' type
   * @param audience who gets an entry
   * @param recalledMode for a RECALL, where the original's copies went ({@link #WRITE_DIFFUSED}, {@link #TIMELINE}
   *     or {@link #UNKNOWN_MODE})
   * @param historyOverwrite for a RECALL, the history record that replaces the original (its body removed)
   */
  public record Plan(Refusal refusal, InboxEntryType type, Audience audience, char recalledMode,
      KeyValue<String, ChatMessage> historyOverwrite) {
    static Plan refused(String code, String reason) {
      return new Plan(new Refusal(code, reason), null, null, UNKNOWN_MODE, null);
    }
  }

  /** Where a group record's entries go: to the recipients, to the group's timeline, or both. */
  public record Route(boolean members, boolean timeline) {
    /** Whether one timeline entry stands in for the members' copies (a write saved per member but one). */
    boolean savesWrites() {
      return timeline && !members;
    }
  }

  /** The earliest send time a RECALL at {@code timestamp} may still withdraw. */
  public static long recallFrom(long timestamp, Duration recallWindow) {
    return Math.max(0, timestamp - recallWindow.toMillis());
  }

  /**
   * The plan for validated {@code m}.
   *
   * @param senderIsMember whether the sender is a member of the group (looked up for a group MESSAGE or READ)
   * @param original the sent-store record of the message a RECALL names, within the recall window, or null
   */
  public static Plan plan(ChatMessage m, boolean senderIsMember, SentCodec.Sent original, Duration recallWindow) {
    boolean direct = m.getConversationType() == ConversationType.DIRECT;
    return switch (m.getType()) {
      case MESSAGE -> direct ? accepted(InboxEntryType.MESSAGE, Audience.of(distinct(m.getRecipientId(),
          m.getSenderId())))
          : !senderIsMember ? Plan.refused("NOT_MEMBER", "sender " + m.getSenderId() + " is not a member of group "
              + m.getGroupId())
          : accepted(InboxEntryType.MESSAGE, Audience.members());
      // A non-member's read marker is refused like any other action in a group; the reader's other devices, and
      // in a direct chat the other party (a read receipt), get one.
      case READ -> direct ? accepted(InboxEntryType.READ, Audience.of(distinct(m.getSenderId(), m.getRecipientId())))
          : !senderIsMember ? Plan.refused("NOT_MEMBER", "reader " + m.getSenderId() + " is not a member of group "
              + m.getGroupId())
          : accepted(InboxEntryType.READ, Audience.of(List.of(m.getSenderId())));
      case RECALL -> recall(m, original, recallWindow);
      case UNKNOWN, JOIN, LEAVE -> throw new IllegalStateException("validated: " + m.getType());
    };
  }

  private static Plan accepted(InboxEntryType type, Audience audience) {
    return new Plan(null, type, audience, UNKNOWN_MODE, null);
  }

  private static Plan recall(ChatMessage m, SentCodec.Sent original, Duration recallWindow) {
    if (original == null) {
      return Plan.refused("UNKNOWN_MESSAGE", "RECALL of unknown message " + m.getRefMessageId()
          + " (or older than the recall window " + recallWindow + ")");
    }
    if (!original.senderId().equals(m.getSenderId())) {
      return Plan.refused("NOT_SENDER", "RECALL of message " + m.getRefMessageId() + " by " + m.getSenderId()
          + ", but only its sender may recall it");
    }
    if (!original.conversationId().equals(m.getConversationId())) {
      return Plan.refused("UNKNOWN_MESSAGE", "RECALL of message " + m.getRefMessageId() + " in conversation "
          + m.getConversationId() + ", but it was sent in another conversation");
    }
    KeyValue<String, ChatMessage> overwrite = recalled(m, original.seq(), original.sentAt(), original.clientMsgId());
    if (m.getConversationType() == ConversationType.DIRECT) {
      return new Plan(null, InboxEntryType.RECALL, Audience.of(distinct(m.getRecipientId(), m.getSenderId())),
          UNKNOWN_MODE, overwrite);
    }
    // Everyone who received the original: their inbox holds it, also when they left since (added back or not).
    char mode = original.mode() == WRITE_DIFFUSED || original.mode() == TIMELINE ? original.mode() : UNKNOWN_MODE;
    return new Plan(null, InboxEntryType.RECALL, Audience.membersAt(original.clock()), mode, overwrite);
  }

  /**
   * Whether the group is large for this record: what its member count wants, unless a switch is still being
   * written (then the mode does not change again until its last round is done).
   */
  public static boolean large(GroupState group, int threshold, boolean switchPending) {
    boolean wanted = group.wantsLarge(threshold);
    return wanted != group.large() && switchPending ? group.large() : wanted;
  }

  /**
   * Where a group record goes with the group {@code large} now. MESSAGE: the timeline when large, else the members;
   * READ: the members. A RECALL goes where the original's copies are, whatever the mode is now: copies in the
   * inboxes (sent while small) get a RECALL each and the timeline none; a copy in the timeline of a group still
   * large, the timeline only; a timeline copy of a group small again, the timeline (to remove the copy) and each
   * recipient; not recorded, as the group's mode is now.
   */
  public static Route route(InboxEntryType type, boolean large, char recalledMode) {
    if (type == InboxEntryType.RECALL) {
      boolean timelineCopy = recalledMode == TIMELINE || recalledMode == UNKNOWN_MODE && large;
      return new Route(!(timelineCopy && large), timelineCopy);
    }
    boolean timeline = large && type == InboxEntryType.MESSAGE;
    return new Route(!timeline, timeline);
  }

  /** The inbox entry of {@code m} for {@code user}: a MESSAGE carries the body, a READ or RECALL does not. */
  public static InboxEntry entry(ChatMessage m, String user, InboxEntryType type, long seq) {
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

  /**
   * The history record that replaces a recalled message at its seq: the same ids and time, no body, attribute
   * {@value #RECALLED_ATTRIBUTE} = the recall's messageId. (The original stays in {@code im.messages} only.)
   */
  static KeyValue<String, ChatMessage> recalled(ChatMessage recall, long seq, long sentAt, String clientMsgId) {
    ChatMessage stub = ChatMessage.newBuilder()
        .setMessageId(recall.getRefMessageId())
        .setClientMsgId(clientMsgId)
        .setConversationId(recall.getConversationId())
        .setConversationType(recall.getConversationType())
        .setType(MessageType.MESSAGE)
        .setSenderId(recall.getSenderId())
        .setRecipientId(recall.getRecipientId())
        .setGroupId(recall.getGroupId())
        .setBody(null)
        .setSentAt(Instant.ofEpochMilli(sentAt))
        .setAttributes(Map.of(RECALLED_ATTRIBUTE, recall.getMessageId()))
        .build();
    return KeyValue.pair(HistoryKey.of(recall.getConversationId(), seq), stub);
  }

  private static List<String> distinct(String a, String b) {
    Set<String> users = new LinkedHashSet<>();
    users.add(a);
    users.add(b);
    return List.copyOf(users);
  }
}
