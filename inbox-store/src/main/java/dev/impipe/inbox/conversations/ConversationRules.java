package dev.impipe.inbox.conversations;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.domain.Ids;
import java.util.Optional;

/**
 * The rules of the conversation list, as pure functions of one user's state of one conversation and one inbox
 * entry of that user. A rule says what to do with the state's unread index ({@link UnreadOp}); {@link #unread}
 * does it, and the counts follow from what the index held ({@link #tracked}, {@link #read}, {@link #recalled}).
 */
public final class ConversationRules {

  private ConversationRules() {}

  /** What the shell does with the unread index for an entry. */
  public sealed interface UnreadOp {
    /** Nothing. */
    record None() implements UnreadOp {}

    /** A message from someone else above the read marker: index it (evicting the oldest beyond the cap). */
    record Track(long conversationSeq, String messageId) implements UnreadOp {}

    /** The read marker moved to {@code upToSeq}: remove every indexed message at or below it. */
    record ReadUpTo(long upToSeq) implements UnreadOp {}

    /** A message was withdrawn: remove it from the index if it is there. */
    record Recall(String messageId) implements UnreadOp {}
  }

  /** The new state (before the unread index is applied) and what to do with the index. */
  public record Step(ConversationState state, UnreadOp op) {}

  /**
   * Applies {@code e}, an entry of {@code user}'s inbox, to {@code before} (null: the conversation is new to this
   * user). Empty when the entry does not concern the list (a REJECTED, an unknown type, another user's READ).
   */
  public static Optional<Step> apply(ConversationState before, InboxEntry e, String user) {
    ConversationState s = before == null ? ConversationState.empty() : before;
    long at = e.getTimestamp().toEpochMilli();
    InboxEntryType type = e.getType();
    Step step;
    if (type == InboxEntryType.MESSAGE) {
      step = message(s, e, user, at);
    } else if (type == InboxEntryType.READ) {
      if (!user.equals(e.getSenderId()) || e.getReadUpToSeq() == null || e.getReadUpToSeq() <= s.readUpToSeq()) {
        // A read receipt of the other party, or a marker that does not move ours.
        return Optional.empty();
      }
      step = new Step(s.withRead(e.getReadUpToSeq(), s.unread(), s.untracked(), s.untrackedMaxSeq()),
          new UnreadOp.ReadUpTo(e.getReadUpToSeq()));
    } else if (type == InboxEntryType.RECALL) {
      if (e.getRefMessageId() == null) {
        return Optional.empty();
      }
      ConversationState.Last last = s.last();
      ConversationState after = s;
      if (last != null && e.getRefMessageId().equals(last.messageId()) && !last.recalled()) {
        after = s.withLast(new ConversationState.Last(last.conversationSeq(), last.messageId(), last.senderId(),
            last.type(), null, last.timestamp(), true));
      }
      step = new Step(after, new UnreadOp.Recall(e.getRefMessageId()));
    } else if (type == InboxEntryType.CONVERSATION_JOINED) {
      if (Ids.isDirect(e.getConversationId())) {
        return Optional.empty();
      }
      long from = e.getTimelineFromSeq() == null ? 0 : Math.max(0, e.getTimelineFromSeq());
      step = new Step(s.withMembership(true, Boolean.TRUE.equals(e.getReadDiffusion()), from)
          .withTimes(Math.max(s.activityAt(), at), s.updatedAt()), new UnreadOp.None());
    } else if (type == InboxEntryType.CONVERSATION_LEFT) {
      step = new Step(s.withMembership(false, false, s.fromSeq()), new UnreadOp.None());
    } else if (type == InboxEntryType.CONVERSATION_MODE) {
      step = new Step(s.withMembership(s.member(), Boolean.TRUE.equals(e.getReadDiffusion()), s.fromSeq()),
          new UnreadOp.None());
    } else if (type == InboxEntryType.CONVERSATION_SETTINGS) {
      step = new Step(s.withSettings(e.getMuted() == null ? s.muted() : e.getMuted(),
          e.getPinned() == null ? s.pinned() : e.getPinned()), new UnreadOp.None());
    } else {
      return Optional.empty();
    }
    ConversationState out = step.state();
    return Optional.of(new Step(out.withTimes(out.activityAt(), Math.max(out.updatedAt(), at)), step.op()));
  }

  private static Step message(ConversationState s, InboxEntry e, String user, long at) {
    long seq = e.getConversationSeq();
    ConversationState after = s;
    if (s.last() == null || seq >= s.last().conversationSeq()) {
      after = s.withLast(new ConversationState.Last(seq, e.getMessageId(), e.getSenderId(), e.getType().name(),
          e.getBody(), at, e.getRecalledBy() != null))
          .withTimes(Math.max(s.activityAt(), at), s.updatedAt());
    }
    boolean fromOther = !user.equals(e.getSenderId());
    UnreadOp op = fromOther && seq > s.readUpToSeq() && e.getMessageId() != null
        ? new UnreadOp.Track(seq, e.getMessageId()) : new UnreadOp.None();
    return new Step(after, op);
  }

  /**
   * The state after the entry: {@code step}'s state with its unread op applied to the state's index, which keeps
   * at most {@code tracked} messages (the oldest is evicted beyond it and stays counted as untracked).
   */
  public static ConversationState unread(Step step, int tracked) {
    ConversationState s = step.state();
    UnreadIndex index = s.index();
    if (step.op() instanceof UnreadOp.Track track) {
      if (index.contains(track.conversationSeq()) || track.conversationSeq() <= s.untrackedMaxSeq()) {
        // The same message again (a replayed entry, e.g. the retained inbox of a grown generation replayed over the
        // state carried over, ADR 0014): counted once. A conversation's messages reach the inbox in seq order, so
        // one at or below the newest untracked one is an evicted one, counted already.
        return s;
      }
      long evicted = -1;
      if (index.size() >= Math.max(1, tracked)) { // a cap below 1 still keeps the newest
        evicted = index.oldest();
        index = index.withoutOldest();
      }
      return tracked(s.withIndex(index.with(track.conversationSeq(), track.messageId())), evicted);
    }
    if (step.op() instanceof UnreadOp.ReadUpTo read) {
      long upTo = Math.max(0, read.upToSeq());
      return read(s.withIndex(index.withoutUpTo(upTo)), index.countUpTo(upTo));
    }
    if (step.op() instanceof UnreadOp.Recall recall) {
      UnreadIndex after = index.without(recall.messageId());
      // Not there: read already, never counted (own, or before the marker), or beyond the index
      return after == index ? s : recalled(s.withIndex(after), 1);
    }
    return s;
  }

  /** Whether a count of this conversation hit the index's cap and counts in the badge (not muted). */
  public static boolean cappedInBadge(ConversationState s) {
    return s != null && !s.muted() && s.untracked() > 0;
  }

  /**
   * After a message was indexed: one more unread; when the index evicted its oldest (at {@code evictedSeq}, -1 if
   * none) to stay within its cap, that one stays counted as untracked.
   */
  public static ConversationState tracked(ConversationState s, long evictedSeq) {
    if (evictedSeq < 0) {
      return s.withUnread(s.unread() + 1, s.untracked(), s.untrackedMaxSeq());
    }
    return s.withUnread(s.unread() + 1, s.untracked() + 1, Math.max(s.untrackedMaxSeq(), evictedSeq));
  }

  /**
   * After the read marker moved and {@code removed} indexed messages were removed: the untracked ones are all read
   * once the marker reaches the newest of them (before that, some may still be unread: they stay counted).
   */
  public static ConversationState read(ConversationState s, long removed) {
    long unread = Math.max(0, s.unread() - removed);
    if (s.untracked() != 0 && s.readUpToSeq() >= s.untrackedMaxSeq()) {
      return s.withUnread(Math.max(0, unread - s.untracked()), 0, -1);
    }
    return s.withUnread(unread, s.untracked(), s.untrackedMaxSeq());
  }

  /** After a recall removed {@code removed} (0 or 1) indexed messages. */
  public static ConversationState recalled(ConversationState s, long removed) {
    return s.withUnread(Math.max(s.untracked(), s.unread() - removed), s.untracked(), s.untrackedMaxSeq());
  }

  /** Whether the unread of this conversation counts in the user's badge total: not when muted. */
  public static long badge(ConversationState s) {
    return s == null || s.muted() ? 0 : s.unread();
  }
}
