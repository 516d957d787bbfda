package dev.impipe.push;

import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.query.ReadIntervals;
import java.util.ArrayList;
import java.util.List;

/**
 * What one connection knows of one of its user's large groups: the conversation seqs the user reads from the group's
 * timeline ({@code #groupId}), as the merged sync's store answered them and as the user's own membership entries
 * pushed since then changed them. Decides, for each live timeline entry, what the merged sync would decide: shown
 * inside an interval, never after the user's own leave, and not at all for other members' leaves.
 */
final class GroupFeed {

  /** What to do with a timeline entry. */
  enum Verdict {
    /** Inside the user's intervals: push it. */
    PUSH,
    /** Not for this user (outside the intervals, another member's leave, or after the user's own leave). */
    SKIP,
    /** Past every interval, none open: nothing later in the timeline is for this user; stop listening. */
    BEYOND
  }

  private ReadIntervals intervals;
  private long through;
  /** Start of the open interval in which the user's own leave was seen in the timeline (-1: none). */
  private long stoppedFrom = -1;

  private GroupFeed(ReadIntervals intervals, long through) {
    this.intervals = intervals;
    this.through = through;
  }

  /** A group the user is not known to read yet (its first interval comes with a membership entry). */
  static GroupFeed none() {
    return new GroupFeed(ReadIntervals.NONE, -1);
  }

  /**
   * As a sync page told it: {@code ranges} ({@link ReadIntervals#ranges()}) reflecting the membership entries up to
   * inbox seq {@code through}.
   */
  static GroupFeed of(String ranges, long through) {
    GroupFeed feed = none();
    feed.replace(ranges, through);
    return feed;
  }

  /**
   * Takes a newer answer of the store (a later page). A leave seen in the timeline still holds while the store
   * shows the same interval open (the leave has not reached the user's inbox yet).
   */
  void replace(String ranges, long through) {
    List<ReadIntervals.Interval> out = new ArrayList<>();
    for (long[] r : ReadIntervals.parseRanges(ranges)) {
      boolean open = r[1] == Long.MAX_VALUE;
      out.add(new ReadIntervals.Interval(r[0], r[1], through, open ? Long.MAX_VALUE : through, Long.MAX_VALUE));
    }
    this.intervals = new ReadIntervals(out);
    this.through = through;
  }

  /**
   * Applies the user's own JOINED / LEFT / MODE entry of this group at inbox seq {@code inboxSeq}, unless the
   * intervals already reflect it. Returns whether it opened an interval (then timeline entries the reader passed
   * before may belong to the user: the connection reads them from the store).
   */
  boolean apply(long inboxSeq, InboxEntryType type, long timelineFromSeq, boolean readDiffusion) {
    if (inboxSeq <= through) {
      return false;
    }
    through = inboxSeq;
    boolean open = type != InboxEntryType.CONVERSATION_LEFT && readDiffusion;
    if (intervals.isEmpty() && !open) {
      return false;
    }
    intervals = intervals.apply(timelineFromSeq, open, inboxSeq, Long.MAX_VALUE);
    stoppedFrom = -1;
    return open;
  }

  /** The verdict on the timeline entry of type {@code type} at {@code conversationSeq} written for {@code senderId}. */
  Verdict offer(String user, InboxEntryType type, long conversationSeq, String senderId) {
    boolean inside = intervals.indexOf(conversationSeq) >= 0;
    if (type == InboxEntryType.CONVERSATION_LEFT) {
      // The user's own leave, not yet applied from the inbox (another partition): nothing after it is theirs.
      if (inside && user.equals(senderId) && !leaveApplied(conversationSeq) && intervals.openInterval() != null) {
        stoppedFrom = intervals.openInterval().from();
        return Verdict.SKIP;
      }
      return beyond(conversationSeq) ? Verdict.BEYOND : Verdict.SKIP;
    }
    if (inside && !stopped()) {
      return Verdict.PUSH;
    }
    return beyond(conversationSeq) ? Verdict.BEYOND : Verdict.SKIP;
  }

  /** Whether the user reads the group at all (some interval, open or closed). */
  boolean reads() {
    return !intervals.isEmpty();
  }

  /** Whether the user's own leave was seen in the timeline in the interval still open here. */
  boolean stopped() {
    ReadIntervals.Interval open = intervals.openInterval();
    return stoppedFrom >= 0 && open != null && open.from() == stoppedFrom;
  }

  long through() {
    return through;
  }

  /** An interval closed at {@code conversationSeq}: a leave there is applied (a rejoin may follow at the same seq). */
  private boolean leaveApplied(long conversationSeq) {
    return intervals.intervals().stream().anyMatch(i -> !i.open() && i.to() == conversationSeq);
  }

  private boolean beyond(long conversationSeq) {
    if (intervals.openInterval() != null) {
      return false;
    }
    List<ReadIntervals.Interval> all = intervals.intervals();
    return all.isEmpty() || conversationSeq >= all.get(all.size() - 1).to();
  }
}
