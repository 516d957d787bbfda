package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A user's own leave can reach the group's timeline (its partition) before the user's inbox: the merge must stop
 * at it there, and other members' leaves in the timeline are never shown but never hold the position back.
 */
class MergedSyncLeaveTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  private static final Page<InboxEntry> EMPTY_INBOX = new Page<>(List.of(), null, false);

  @Test
  void aLeaveSeenInTheTimelineEndsTheReadEvenWhileTheUsersIntervalStillLooksOpen() {
    // Given carol's inbox has applied her JOIN of large group g at conversation seq 0, but not yet her LEFT
    ReadIntervals open = ReadIntervals.NONE.apply(0, true, 3, T0.toEpochMilli());
    // and g's timeline already holds m1, carol's LEFT, then m2 sent after she left
    List<Page.Entry<InboxEntry>> timeline = List.of(
        new Page.Entry<>(0, message("m1", 0)),
        new Page.Entry<>(1, leave("carol", 1)),
        new Page.Entry<>(2, message("m2", 1)));

    // When carol's device syncs
    MergedSync.SyncPage page = MergedSync.merge("carol", EMPTY_INBOX, -1,
        List.of(new MergedSync.Group("g", open, -1)), (g, after, intervals,
            limit) -> new Page<>(timeline.stream().filter(e -> e.seq() > after).toList(), null, false),
        50);

    // Then she sees m1 only, and her position in g stays before her leave
    assertThat(page.entries()).extracting(e -> e.value().getMessageId()).containsExactly("m1");
    assertThat(page.hasMore()).isFalse();
    assertThat(page.cursor().groups()).containsEntry("g", 0L);
  }

  @Test
  void otherMembersLeavesAreNotShownAndDoNotHoldThePositionBack() {
    ReadIntervals open = ReadIntervals.NONE.apply(0, true, 3, T0.toEpochMilli());
    List<Page.Entry<InboxEntry>> timeline = List.of(
        new Page.Entry<>(0, message("m1", 0)),
        new Page.Entry<>(1, leave("dave", 1)),
        new Page.Entry<>(2, leave("erin", 1)));

    MergedSync.SyncPage page = MergedSync.merge("carol", EMPTY_INBOX, -1,
        List.of(new MergedSync.Group("g", open, -1)), (g, after, intervals,
            limit) -> new Page<>(timeline.stream().filter(e -> e.seq() > after).toList(), null, false),
        50);

    assertThat(page.entries()).extracting(e -> e.value().getMessageId()).containsExactly("m1");
    assertThat(page.cursor().groups()).containsEntry("g", 2L);
  }

  private static InboxEntry message(String id, long conversationSeq) {
    return InboxEntry.newBuilder().setUserId("#g").setType(InboxEntryType.MESSAGE).setConversationId("g")
        .setConversationSeq(conversationSeq).setMessageId(id).setSenderId("alice").setBody(id).setTimestamp(T0)
        .build();
  }

  private static InboxEntry leave(String user, long conversationSeq) {
    return InboxEntry.newBuilder().setUserId("#g").setType(InboxEntryType.CONVERSATION_LEFT).setConversationId("g")
        .setConversationSeq(conversationSeq).setSenderId(user).setTimelineFromSeq(conversationSeq)
        .setReadDiffusion(true).setTimestamp(T0).build();
  }
}
