package dev.impipe.inbox.conversations;

import dev.impipe.runtime.streams.VersionedValue;

/**
 * What the list knows of one conversation of one user, kept incrementally from the user's inbox entries.
 *
 * @param member false once the user left the group (a direct conversation: always true)
 * @param large the user reads the group from its timeline ({@code #groupId}, read diffusion)
 * @param fromSeq the conversation seq of the user's last join of a group (0 for a direct conversation)
 * @param readUpToSeq the user's read marker: the highest {@code readUpToSeq} of their own READs, -1 before any
 * @param unread MESSAGE entries from others above the read marker, not recalled ({@code tracked + untracked})
 * @param untracked unread messages no longer in the unread index (it keeps the newest
 *     {@code IM_CONVERSATION_UNREAD_TRACKED} per conversation): they are counted, but a recall of one is not
 *     subtracted; all of them are older than {@code untrackedMaxSeq}
 * @param untrackedMaxSeq the highest conversation seq among the untracked ones (-1 if none)
 * @param last the newest message, or null before any
 * @param muted set by the user's settings
 * @param pinned set by the user's settings
 * @param activityAt time of the newest message or join (the list's order after pinned)
 * @param updatedAt time of the newest entry that changed this state
 * @param index the tracked unread messages ({@code unread - untracked} of them), newest
 *     {@code IM_CONVERSATION_UNREAD_TRACKED} at most
 */
public record ConversationState(boolean member, boolean large, long fromSeq, long readUpToSeq, long unread,
    long untracked, long untrackedMaxSeq, Last last, boolean muted, boolean pinned, long activityAt,
    long updatedAt, UnreadIndex index) {

  /**
   * Version 3: version 2 with 4-byte hashes in the unread index, not 8. Version 2 (still read): version 1 plus the
   * unread index (version 1 kept it in a store of its own).
   */
  private static final int VERSION = 3;
  /** The version before, read as this one: the same fields, 8-byte hashes in the index. */
  private static final int VERSION_8_BYTE_HASHES = 2;
  private static final String FORMAT = "conversations";

  /**
   * The newest message of a conversation.
   *
   * @param body null once recalled
   */
  public record Last(long conversationSeq, String messageId, String senderId, String type, String body,
      long timestamp, boolean recalled) {}

  public ConversationState {
    index = index == null ? UnreadIndex.EMPTY : index;
  }

  /** A state with an empty unread index. */
  public ConversationState(boolean member, boolean large, long fromSeq, long readUpToSeq, long unread,
      long untracked, long untrackedMaxSeq, Last last, boolean muted, boolean pinned, long activityAt,
      long updatedAt) {
    this(member, large, fromSeq, readUpToSeq, unread, untracked, untrackedMaxSeq, last, muted, pinned, activityAt,
        updatedAt, UnreadIndex.EMPTY);
  }

  /** A conversation the user has seen nothing of yet. */
  public static ConversationState empty() {
    return new ConversationState(true, false, 0, -1, 0, 0, -1, null, false, false, 0, 0);
  }

  public ConversationState withIndex(UnreadIndex newIndex) {
    return new ConversationState(member, large, fromSeq, readUpToSeq, unread, untracked, untrackedMaxSeq, last,
        muted, pinned, activityAt, updatedAt, newIndex);
  }

  /** Unread messages still in the unread index. */
  public long tracked() {
    return unread - untracked;
  }

  public ConversationState withMembership(boolean newMember, boolean newLarge, long newFromSeq) {
    return new ConversationState(newMember, newLarge, newFromSeq, readUpToSeq, unread, untracked, untrackedMaxSeq,
        last, muted, pinned, activityAt, updatedAt, index);
  }

  public ConversationState withRead(long newReadUpToSeq, long newUnread, long newUntracked, long newUntrackedMax) {
    return new ConversationState(member, large, fromSeq, newReadUpToSeq, newUnread, newUntracked, newUntrackedMax,
        last, muted, pinned, activityAt, updatedAt, index);
  }

  public ConversationState withUnread(long newUnread, long newUntracked, long newUntrackedMax) {
    return withRead(readUpToSeq, newUnread, newUntracked, newUntrackedMax);
  }

  public ConversationState withLast(Last newLast) {
    return new ConversationState(member, large, fromSeq, readUpToSeq, unread, untracked, untrackedMaxSeq, newLast,
        muted, pinned, activityAt, updatedAt, index);
  }

  public ConversationState withSettings(boolean newMuted, boolean newPinned) {
    return new ConversationState(member, large, fromSeq, readUpToSeq, unread, untracked, untrackedMaxSeq, last,
        newMuted, newPinned, activityAt, updatedAt, index);
  }

  public ConversationState withTimes(long newActivityAt, long newUpdatedAt) {
    return new ConversationState(member, large, fromSeq, readUpToSeq, unread, untracked, untrackedMaxSeq, last,
        muted, pinned, newActivityAt, newUpdatedAt, index);
  }

  /**
   * The stored form: {@code [version 3]} then the fields in order; {@code last} behind a presence byte, the index
   * last ({@link UnreadIndex#encode()}, length-prefixed).
   */
  public byte[] encode() {
    VersionedValue.Writer w = VersionedValue.write(VERSION).int8(flags()).int64(fromSeq).int64(readUpToSeq)
        .int64(unread).int64(untracked).int64(untrackedMaxSeq).int64(activityAt).int64(updatedAt);
    if (last == null) {
      w.int8(0);
    } else {
      w.int8(last.recalled() ? 2 : 1).int64(last.conversationSeq()).string(last.messageId())
          .string(last.senderId()).string(last.type()).string(last.body()).int64(last.timestamp());
    }
    return w.bytes(index.encode()).build();
  }

  /** Reads what {@link #encode()} wrote. */
  public static ConversationState decode(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, FORMAT, VERSION, VERSION_8_BYTE_HASHES);
    int flags = r.int8();
    long fromSeq = r.int64();
    long readUpTo = r.int64();
    long unread = r.int64();
    long untracked = r.int64();
    long untrackedMax = r.int64();
    long activity = r.int64();
    long updated = r.int64();
    int lastTag = r.int8();
    Last last = null;
    if (lastTag != 0) {
      last = new Last(r.int64(), r.string(), r.string(), r.string(), r.string(), r.int64(), lastTag == 2);
    }
    byte[] index = r.bytes();
    r.end();
    UnreadIndex decoded;
    try {
      decoded = index == null ? UnreadIndex.EMPTY
          : UnreadIndex.decode(index, r.version() == VERSION ? Integer.BYTES : Long.BYTES);
    } catch (IllegalArgumentException e) {
      throw new VersionedValue.MalformedValueException(FORMAT + " value: " + e.getMessage());
    }
    return new ConversationState((flags & 1) != 0, (flags & 2) != 0, fromSeq, readUpTo, unread, untracked,
        untrackedMax, last, (flags & 4) != 0, (flags & 8) != 0, activity, updated, decoded);
  }

  /**
   * Whether a stored state is pinned, without decoding the rest (the list sorts every state of a user per request).
   * A value that is not this version decodes in full, so its error is {@link #decode}'s.
   */
  public static boolean storedPinned(byte[] value) {
    return isCurrent(value) ? (value[1] & 8) != 0 : decode(value).pinned();
  }

  /** {@link #activityAt()} of a stored state, without decoding the rest. */
  public static long storedActivityAt(byte[] value) {
    return isCurrent(value) ? int64At(value, ACTIVITY_AT) : decode(value).activityAt();
  }

  /**
   * What a stored state adds to its user's badge ({@link ConversationRules#badge}: its unread, 0 when muted),
   * without decoding the rest.
   */
  public static long storedBadge(byte[] value) {
    if (!isCurrent(value)) {
      return ConversationRules.badge(decode(value));
    }
    return (value[1] & 4) != 0 ? 0 : int64At(value, UNREAD);
  }

  /** {@link ConversationRules#cappedInBadge} of a stored state, without decoding the rest. */
  public static boolean storedCappedInBadge(byte[] value) {
    if (!isCurrent(value)) {
      return ConversationRules.cappedInBadge(decode(value));
    }
    return (value[1] & 4) == 0 && int64At(value, UNREAD + Long.BYTES) > 0;
  }

  /** Offset of unread in the stored form: version, flags, fromSeq, readUpToSeq (untracked follows it). */
  private static final int UNREAD = 2 + 2 * Long.BYTES;
  /** Offset of activityAt in the stored form: version, flags, five int64 fields. */
  private static final int ACTIVITY_AT = 2 + 5 * Long.BYTES;

  private static long int64At(byte[] value, int at) {
    long v = 0;
    for (int i = at; i < at + Long.BYTES; i++) {
      v = (v << 8) | (value[i] & 0xff);
    }
    return v;
  }

  private static boolean isCurrent(byte[] value) {
    // Versions 2 and 3 differ in the index only, after the fields read here.
    return value != null && value.length >= ACTIVITY_AT + Long.BYTES
        && (value[0] == VERSION || value[0] == VERSION_8_BYTE_HASHES);
  }

  private int flags() {
    return (member ? 1 : 0) | (large ? 2 : 0) | (muted ? 4 : 0) | (pinned ? 8 : 0);
  }
}
