package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.query.Page;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a large group's timeline adds to a member's list entry: the ranges above the marker, the newer last. */
class LargeGroupCountsTest {

  private static final long OPEN = Long.MAX_VALUE;

  @Test
  void onlyThePartsOfTheRangesAboveTheMarkerAreCounted() {
    List<long[]> ranges = List.of(new long[] {5, 9}, new long[] {12, OPEN});
    // When the marker is inside the first range: its rest and the open range
    assertThat(LargeGroupCounts.above(ranges, 6)).containsExactly(new long[] {7, 9}, new long[] {12, OPEN});
    // When the marker is at the last seq of the first range: nothing of it is left, not an empty range
    assertThat(LargeGroupCounts.above(ranges, 8)).containsExactly(new long[] {12, OPEN});
    assertThat(LargeGroupCounts.above(ranges, -1)).containsExactly(new long[] {5, 9}, new long[] {12, OPEN});
  }

  @Test
  void aSeqIsWithinARangeFromItsFirstUpToButNotIncludingItsEnd() {
    List<long[]> ranges = List.of(new long[] {5, 9}, new long[] {12, 13});
    assertThat(LargeGroupCounts.within(ranges, 4)).isFalse();
    assertThat(LargeGroupCounts.within(ranges, 5)).isTrue();
    assertThat(LargeGroupCounts.within(ranges, 8)).isTrue();
    assertThat(LargeGroupCounts.within(ranges, 9)).isFalse();
    assertThat(LargeGroupCounts.within(ranges, 12)).isTrue();
    assertThat(LargeGroupCounts.within(List.of(), 5)).isFalse();
  }

  @Test
  void theTimelinesLastReplacesTheMembersOnlyWhenNewerAndItsUnreadAdds() {
    ConversationState.Last own = new ConversationState.Last(9, "m9", "bob", "MESSAGE", "from my inbox", 1, false);
    ConversationState member = ConversationState.empty().withLast(own).withUnread(2, 1, 3);
    ConversationState.Last same = new ConversationState.Last(9, "m9", "bob", "MESSAGE", null, 1, true);
    ConversationState.Last newer = new ConversationState.Last(10, "m10", "amy", "MESSAGE", "hi", 2, false);
    // When the timeline's last is the same seq: the member's stays; its unread add to the member's
    ConversationState merged = LargeGroupCounts.merge(member, new LargeGroupCounts.Summary(same, 4, false));
    assertThat(merged.last()).isEqualTo(own);
    assertThat(merged.unread()).isEqualTo(6);
    assertThat(merged.untracked()).isEqualTo(1);
    // When it is newer, or the member has none: the timeline's
    assertThat(LargeGroupCounts.merge(member, new LargeGroupCounts.Summary(newer, 0, false)).last())
        .isEqualTo(newer);
    assertThat(LargeGroupCounts.merge(ConversationState.empty(), new LargeGroupCounts.Summary(same, 0, false))
        .last()).isEqualTo(same);
    assertThat(LargeGroupCounts.merge(member, LargeGroupCounts.Summary.NONE)).isEqualTo(member);
  }

  @Test
  void theSummaryCountsOthersMessagesNotRecalledAndTakesTheGroupsLastWhenWithinTheRanges() {
    // Given a page of the timeline: amy's and carol's messages, the reader's own, a recalled one, a read receipt
    List<Page.Entry<InboxEntry>> entries = List.of(new Page.Entry<>(1, entry(InboxEntryType.MESSAGE, "amy", null)),
        new Page.Entry<>(2, entry(InboxEntryType.MESSAGE, "bob", null)),
        new Page.Entry<>(3, entry(InboxEntryType.MESSAGE, "amy", "amy")),
        new Page.Entry<>(4, entry(InboxEntryType.READ, "amy", null)),
        new Page.Entry<>(5, entry(InboxEntryType.MESSAGE, "carol", null)));
    Page<InboxEntry> page = new Page<>(entries, 5L, true);
    ConversationState.Last last = new ConversationState.Last(7, "m7", "amy", "MESSAGE", "hi", 1, false);
    ConversationState group = ConversationState.empty().withLast(last);
    List<long[]> ranges = List.of(new long[] {5, 9});
    // Then two unread, capped (more wait), and the group's last as it lies within the ranges
    assertThat(LargeGroupCounts.summarise(group, ranges, page, "bob"))
        .isEqualTo(new LargeGroupCounts.Summary(last, 2, true));
    // When the last lies outside the ranges, or the group has none: no last
    assertThat(LargeGroupCounts.summarise(group, List.of(new long[] {8, 9}), page, "bob").last()).isNull();
    assertThat(LargeGroupCounts.summarise(ConversationState.empty(), ranges, page, "bob").last()).isNull();
    assertThat(LargeGroupCounts.summarise(null, ranges, new Page<>(List.of(), -1L, false), "bob"))
        .isEqualTo(LargeGroupCounts.Summary.NONE);
  }

  private static InboxEntry entry(InboxEntryType type, String sender, String recalledBy) {
    return InboxEntry.newBuilder().setUserId("#g").setType(type).setConversationId("g").setConversationSeq(5)
        .setMessageId("m").setSenderId(sender).setRecalledBy(recalledBy).setTimestamp(Instant.EPOCH).build();
  }
}
