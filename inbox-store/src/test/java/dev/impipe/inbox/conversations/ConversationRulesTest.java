package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The list's rules as pure functions: one state, one entry, the next state and what to do with the index. */
class ConversationRulesTest {

  private static final Instant T = Instant.parse("2026-11-22T10:00:00Z");

  @Test
  void aMessageFromSomeoneElseIsTrackedAndBecomesTheLast() {
    // Given nothing yet; when bob's message at conversation seq 4 arrives in alice's inbox
    ConversationRules.Step step = ConversationRules.apply(null, message("bob", 4, "hi"), "alice").orElseThrow();

    // Then it is the last message, the activity time is its time, and the shell indexes it
    assertThat(step.state().last().body()).isEqualTo("hi");
    assertThat(step.state().last().conversationSeq()).isEqualTo(4);
    assertThat(step.state().activityAt()).isEqualTo(T.toEpochMilli());
    assertThat(step.op()).isEqualTo(new ConversationRules.UnreadOp.Track(4, "m4"));
    // and once indexed it counts one unread
    assertThat(ConversationRules.tracked(step.state(), -1).unread()).isEqualTo(1);
  }

  @Test
  void ownMessagesAndMessagesAtOrBelowTheMarkerAreNotTracked() {
    ConversationState read = ConversationState.empty().withRead(10, 0, 0, -1);
    assertThat(ConversationRules.apply(read, message("alice", 11, "mine"), "alice").orElseThrow().op())
        .isEqualTo(new ConversationRules.UnreadOp.None());
    assertThat(ConversationRules.apply(read, message("bob", 10, "old"), "alice").orElseThrow().op())
        .isEqualTo(new ConversationRules.UnreadOp.None());
    // An older message arriving late does not replace the last one
    ConversationState withLast = ConversationRules.apply(read, message("bob", 12, "new"), "alice").orElseThrow()
        .state();
    assertThat(ConversationRules.apply(withLast, message("bob", 11, "late"), "alice").orElseThrow().state().last()
        .body()).isEqualTo("new");
  }

  @Test
  void onlyTheUsersOwnReadMovesTheMarkerAndOnlyForward() {
    ConversationState s = ConversationState.empty().withRead(5, 3, 0, -1);
    assertThat(ConversationRules.apply(s, read("bob", 9), "alice")).isEmpty();
    assertThat(ConversationRules.apply(s, read("alice", 5), "alice")).isEmpty();
    ConversationRules.Step step = ConversationRules.apply(s, read("alice", 9), "alice").orElseThrow();
    assertThat(step.op()).isEqualTo(new ConversationRules.UnreadOp.ReadUpTo(9));
    assertThat(step.state().readUpToSeq()).isEqualTo(9);
    // two indexed ones were passed: one left
    assertThat(ConversationRules.read(step.state(), 2).unread()).isEqualTo(1);
  }

  @Test
  void untrackedUnreadClearOnlyOnceTheMarkerPassesTheNewestOfThem() {
    // Given 5 unread, 2 of them evicted from the index (the newest evicted at seq 7)
    ConversationState s = ConversationState.empty().withUnread(5, 2, 7);
    // When the marker reaches 6: one indexed one removed, the untracked stay counted
    ConversationState at6 = ConversationRules.read(s.withRead(6, 5, 2, 7), 1);
    assertThat(at6.unread()).isEqualTo(4);
    assertThat(at6.untracked()).isEqualTo(2);
    // When it reaches 7: they go too
    ConversationState at7 = ConversationRules.read(s.withRead(7, 5, 2, 7), 1);
    assertThat(at7.unread()).isEqualTo(2);
    assertThat(at7.untracked()).isZero();
    // and an eviction moves one from tracked to untracked without changing the count
    ConversationState evicted = ConversationRules.tracked(ConversationState.empty().withUnread(1, 0, -1), 3);
    assertThat(evicted.unread()).isEqualTo(2);
    assertThat(evicted.untracked()).isEqualTo(1);
    assertThat(evicted.untrackedMaxSeq()).isEqualTo(3);
  }

  @Test
  void aRecallOfTheLastMessageRemovesItsBodyAndARecallNeverGoesBelowTheUntracked() {
    ConversationState s = ConversationRules.apply(null, message("bob", 4, "oops"), "alice").orElseThrow().state();
    InboxEntry recall = InboxEntry.newBuilder().setUserId("alice").setType(InboxEntryType.RECALL)
        .setConversationId("d:alice:bob").setConversationSeq(5).setRefMessageId("m4").setSenderId("bob")
        .setTimestamp(T).build();
    ConversationRules.Step step = ConversationRules.apply(s, recall, "alice").orElseThrow();
    assertThat(step.state().last().recalled()).isTrue();
    assertThat(step.state().last().body()).isNull();
    assertThat(step.op()).isEqualTo(new ConversationRules.UnreadOp.Recall("m4"));
    assertThat(ConversationRules.recalled(ConversationState.empty().withUnread(1, 1, 3), 1).unread()).isEqualTo(1);
  }

  @Test
  void membershipModeAndSettingsEntriesChangeOnlyTheirFields() {
    InboxEntry joined = entry(InboxEntryType.CONVERSATION_JOINED).setTimelineFromSeq(7L).setReadDiffusion(true)
        .build();
    ConversationState member = ConversationRules.apply(null, joined, "alice").orElseThrow().state();
    assertThat(member.member()).isTrue();
    assertThat(member.large()).isTrue();
    assertThat(member.fromSeq()).isEqualTo(7);
    ConversationState left = ConversationRules.apply(member, entry(InboxEntryType.CONVERSATION_LEFT).build(),
        "alice").orElseThrow().state();
    assertThat(left.member()).isFalse();
    assertThat(left.large()).isFalse();
    ConversationState small = ConversationRules.apply(member, entry(InboxEntryType.CONVERSATION_MODE)
        .setReadDiffusion(false).build(), "alice").orElseThrow().state();
    assertThat(small.large()).isFalse();
    assertThat(small.member()).isTrue();
    ConversationState pinned = ConversationRules.apply(member, entry(InboxEntryType.CONVERSATION_SETTINGS)
        .setPinned(true).build(), "alice").orElseThrow().state();
    assertThat(pinned.pinned()).isTrue();
    assertThat(pinned.muted()).isFalse();
    ConversationState muted = ConversationRules.apply(pinned, entry(InboxEntryType.CONVERSATION_SETTINGS)
        .setMuted(true).build(), "alice").orElseThrow().state();
    assertThat(muted.pinned()).isTrue();
    assertThat(muted.muted()).isTrue();
    assertThat(ConversationRules.badge(muted.withUnread(3, 0, -1))).isZero();
    assertThat(ConversationRules.badge(pinned.withUnread(3, 0, -1))).isEqualTo(3);
    // REJECTED and unknown entries are not the list's business
    assertThat(ConversationRules.apply(member, entry(InboxEntryType.REJECTED).build(), "alice")).isEmpty();
    assertThat(ConversationRules.apply(member, entry(InboxEntryType.UNKNOWN).build(), "alice")).isEmpty();
  }

  @Test
  void theLastMessageArrivingAgainRecalledReplacesItAndAnEvictionAtSeqZeroIsCounted() {
    // Given bob's message at seq 4 is the last
    ConversationState s = ConversationRules.apply(null, message("bob", 4, "hi"), "alice").orElseThrow().state();
    // When the same message comes again, now recalled: the last is the recalled one
    InboxEntry again = InboxEntry.newBuilder(message("bob", 4, "hi")).setRecalledBy("bob").build();
    assertThat(ConversationRules.apply(s, again, "alice").orElseThrow().state().last().recalled()).isTrue();
    // When the index evicts the message at seq 0: it stays counted as untracked
    ConversationState evicted = ConversationRules.tracked(ConversationState.empty().withUnread(1, 0, -1), 0);
    assertThat(evicted.untracked()).isEqualTo(1);
    assertThat(evicted.untrackedMaxSeq()).isZero();
  }

  @Test
  void theIndexTracksUpToItsCapAndEvictsTheOldestBeyondIt() {
    // Given a cap of two and bob's messages 1 and 2 tracked
    ConversationState s = track(track(ConversationState.empty(), 1, 2), 2, 2);
    assertThat(s.unread()).isEqualTo(2);
    assertThat(s.untracked()).isZero();
    assertThat(s.index()).isEqualTo(UnreadIndex.EMPTY.with(1, "m1").with(2, "m2"));
    // When message 2 comes again: counted once
    assertThat(track(s, 2, 2)).isEqualTo(s);
    // When message 3 comes: the oldest is evicted and stays counted as untracked
    ConversationState three = track(s, 3, 2);
    assertThat(three.unread()).isEqualTo(3);
    assertThat(three.untracked()).isEqualTo(1);
    assertThat(three.untrackedMaxSeq()).isEqualTo(1);
    assertThat(three.index()).isEqualTo(UnreadIndex.EMPTY.with(2, "m2").with(3, "m3"));
    // When the cap is below one: the index still keeps the newest
    assertThat(track(track(ConversationState.empty(), 1, 0), 2, 0).index())
        .isEqualTo(UnreadIndex.EMPTY.with(2, "m2"));
  }

  @Test
  void replayedMessagesAreCountedOnceEvenTheUntrackedOnes() {
    // Given a cap of two and messages 1..4 unread: 1 and 2 evicted (untracked), 3 and 4 tracked
    ConversationState s = ConversationState.empty();
    for (long seq = 1; seq <= 4; seq++) {
      s = track(s, seq, 2);
    }
    assertThat(s.unread()).isEqualTo(4);
    assertThat(s.untrackedMaxSeq()).isEqualTo(2);
    // When all four arrive again (a grown inbox replayed over the carried state)
    ConversationState replayed = s;
    for (long seq = 1; seq <= 4; seq++) {
      replayed = track(replayed, seq, 2);
    }
    // Then nothing changes
    assertThat(replayed).isEqualTo(s);
    // And a new message is counted
    assertThat(track(s, 5, 2).unread()).isEqualTo(5);
  }

  @Test
  void aMarkerOrARecallRemovesFromTheIndexWhatItReaches() {
    // Given bob's messages 1, 2 and 3 tracked
    ConversationState s = track(track(track(ConversationState.empty(), 1, 10), 2, 10), 3, 10);
    // When alice reads up to 2: one unread left, message 3 still indexed
    ConversationState read = ConversationRules.unread(
        ConversationRules.apply(s, read("alice", 2), "alice").orElseThrow(), 10);
    assertThat(read.unread()).isEqualTo(1);
    assertThat(read.index()).isEqualTo(UnreadIndex.EMPTY.with(3, "m3"));
    // When message 3 is recalled: nothing unread
    ConversationState recalled = ConversationRules.unread(
        new ConversationRules.Step(read, new ConversationRules.UnreadOp.Recall("m3")), 10);
    assertThat(recalled.unread()).isZero();
    assertThat(recalled.index()).isEqualTo(UnreadIndex.EMPTY);
    // When a message not indexed is recalled, or the op is none: the same state
    assertThat(ConversationRules.unread(new ConversationRules.Step(read, new ConversationRules.UnreadOp.Recall("m1")),
        10)).isSameAs(read);
    assertThat(ConversationRules.unread(new ConversationRules.Step(read, new ConversationRules.UnreadOp.None()), 10))
        .isSameAs(read);
  }

  @Test
  void aConversationIsCappedInTheBadgeWhenItHasUntrackedUnreadAndIsNotMuted() {
    ConversationState capped = ConversationState.empty().withUnread(5, 1, 3);
    assertThat(ConversationRules.cappedInBadge(capped)).isTrue();
    assertThat(ConversationRules.cappedInBadge(capped.withSettings(true, false))).isFalse();
    assertThat(ConversationRules.cappedInBadge(ConversationState.empty().withUnread(5, 0, -1))).isFalse();
    assertThat(ConversationRules.cappedInBadge(null)).isFalse();
    assertThat(ConversationRules.badge(null)).isZero();
  }

  private static ConversationState track(ConversationState s, long seq, int cap) {
    return ConversationRules.unread(ConversationRules.apply(s, message("bob", seq, "b" + seq), "alice")
        .orElseThrow(), cap);
  }

  private static InboxEntry message(String sender, long seq, String body) {
    return InboxEntry.newBuilder().setUserId("alice").setType(InboxEntryType.MESSAGE).setConversationId("d:alice:bob")
        .setConversationSeq(seq).setMessageId("m" + seq).setSenderId(sender).setBody(body).setTimestamp(T).build();
  }

  private static InboxEntry read(String reader, long upTo) {
    return InboxEntry.newBuilder().setUserId("alice").setType(InboxEntryType.READ).setConversationId("d:alice:bob")
        .setConversationSeq(20).setSenderId(reader).setReadUpToSeq(upTo).setTimestamp(T).build();
  }

  private static InboxEntry.Builder entry(InboxEntryType type) {
    return InboxEntry.newBuilder().setUserId("alice").setType(type).setConversationId("g").setConversationSeq(-1)
        .setTimestamp(T);
  }
}
