package dev.impipe.inbox.conversations;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.Timelines;
import dev.impipe.runtime.domain.Ids;
import java.util.ArrayList;
import java.util.List;

/**
 * Large (read-diffused) groups on the list. Members get no inbox copy of their messages, so the member's own state
 * holds only what their inbox brings (membership, read marker, settings, copies from before the switch); the rest
 * is read from the group's timeline ({@code #groupId}, on its own partition) within the member's read intervals
 * (the same ranges the merged sync uses: only from their last join): the group's last message (kept once per group
 * by {@link ConversationMaterialiser}, not per member) and the messages from others above the read marker, counted
 * up to a cap ({@code IM_CONVERSATION_LARGE_UNREAD_MAX}).
 */
public final class LargeGroupCounts {

  /**
   * What the timeline adds to a member's state.
   *
   * @param last the group's newest message if it lies within the member's ranges, else null
   * @param unread messages from others above the marker within the ranges, not recalled, at most the cap
   * @param capped true when there are more than {@code unread}
   */
  public record Summary(ConversationState.Last last, long unread, boolean capped) {
    public static final Summary NONE = new Summary(null, 0, false);
  }

  /** Reads a group's summary for a member (from the timeline's owner). */
  @FunctionalInterface
  public interface Source {
    Summary fetch(String groupId, String reader, List<long[]> ranges, long readUpToSeq);
  }

  private LargeGroupCounts() {}

  /** The parts of {@code ranges} ({@code [from, to)}, ascending) above the read marker. */
  public static List<long[]> above(List<long[]> ranges, long readUpToSeq) {
    List<long[]> out = new ArrayList<>();
    for (long[] r : ranges) {
      long from = Math.max(r[0], readUpToSeq + 1);
      if (from < r[1]) {
        out.add(new long[] {from, r[1]});
      }
    }
    return out;
  }

  /** Whether {@code seq} lies in one of {@code ranges}. */
  public static boolean within(List<long[]> ranges, long seq) {
    for (long[] r : ranges) {
      if (seq >= r[0] && seq < r[1]) {
        return true;
      }
    }
    return false;
  }

  /**
   * The summary from the timeline's side: {@code group} (the group's state under its timeline key, or null) and a
   * page of the timeline within the unread ranges (at most cap entries; {@code hasMore} when there are more).
   */
  public static Summary summarise(ConversationState group, List<long[]> ranges, Page<InboxEntry> unreadPage,
      String reader) {
    long unread = 0;
    for (Page.Entry<InboxEntry> e : unreadPage.entries()) {
      InboxEntry entry = e.value();
      if (entry.getType() == InboxEntryType.MESSAGE && !reader.equals(entry.getSenderId())
          && entry.getRecalledBy() == null) {
        unread++;
      }
    }
    ConversationState.Last last = group == null || group.last() == null
        || !within(ranges, group.last().conversationSeq()) ? null : group.last();
    return new Summary(last, unread, unreadPage.hasMore());
  }

  /**
   * The summary of {@code group} for {@code reader}, read on the partition of its timeline: the group's state
   * (under the timeline's key in {@code states}) and at most {@code cap} timeline entries above the read marker.
   */
  public static Summary read(StoreView<byte[]> states, StoreView<InboxEntry> timeline, String group, String reader,
      List<long[]> ranges, long readUpToSeq, int cap) {
    String owner = Ids.groupTimeline(group);
    ConversationState groupState = states.get(ConversationKeys.state(owner, group)).map(ConversationState::decode)
        .orElse(null);
    List<long[]> unreadRanges = above(ranges, readUpToSeq);
    Page<InboxEntry> page = unreadRanges.isEmpty() ? new Page<>(List.of(), Timelines.START, false)
        : Timelines.within(timeline, owner, Timelines.START, unreadRanges, cap);
    return summarise(groupState, ranges, page, reader);
  }

  /** The member's state as listed: their own counts plus the timeline's, the newer last message. */
  public static ConversationState merge(ConversationState member, Summary s) {
    ConversationState.Last last = member.last();
    if (s.last() != null && (last == null || s.last().conversationSeq() > last.conversationSeq())) {
      last = s.last();
    }
    return member.withLast(last).withUnread(member.unread() + s.unread(), member.untracked(),
        member.untrackedMaxSeq());
  }
}
