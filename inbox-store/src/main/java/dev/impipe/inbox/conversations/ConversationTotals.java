package dev.impipe.inbox.conversations;

import dev.impipe.runtime.streams.VersionedValue;

/**
 * A user's running totals over all their conversations, kept with the states (one key per user): the badge and how
 * many conversations count more unread than their index tracks. Neither scans the list.
 *
 * @param unread unread of the user's conversations that are not muted (large groups' timelines not included)
 * @param capped conversations, not muted, whose count hit {@code IM_CONVERSATION_UNREAD_TRACKED} (some untracked)
 */
public record ConversationTotals(long unread, long capped) {

  public static final ConversationTotals ZERO = new ConversationTotals(0, 0);

  private static final int VERSION = 1;
  private static final String FORMAT = "conversation-totals";

  /** With the change of one conversation from {@code before} (null: new) to {@code after}. */
  public ConversationTotals plus(ConversationState before, ConversationState after) {
    long unreadDelta = ConversationRules.badge(after) - ConversationRules.badge(before);
    long cappedDelta = (ConversationRules.cappedInBadge(after) ? 1 : 0)
        - (ConversationRules.cappedInBadge(before) ? 1 : 0);
    if (unreadDelta == 0 && cappedDelta == 0) {
      return this;
    }
    return new ConversationTotals(Math.max(0, unread + unreadDelta), Math.max(0, capped + cappedDelta));
  }

  public boolean isZero() {
    return unread == 0 && capped == 0;
  }

  /** {@code [version 1] int64 unread, int64 capped}. */
  public byte[] encode() {
    return VersionedValue.write(VERSION).int64(unread).int64(capped).build();
  }

  /** Reads what {@link #encode()} wrote. */
  public static ConversationTotals decode(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, FORMAT, VERSION);
    ConversationTotals t = new ConversationTotals(r.int64(), r.int64());
    r.end();
    return t;
  }
}
