package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The unread index kept inside a conversation's state, and the totals kept per user. */
class UnreadIndexTest {

  @Test
  void messagesStayInSeqOrderAndAReplayIsNotAddedTwice() {
    // Given messages indexed out of order and one twice
    UnreadIndex index = UnreadIndex.EMPTY.with(7, "m7").with(3, "m3").with(5, "m5").with(5, "m5");
    // Then there are three, the oldest is seq 3
    assertThat(index.size()).isEqualTo(3);
    assertThat(index.oldest()).isEqualTo(3);
    assertThat(index.contains(5)).isTrue();
    assertThat(index.contains(4)).isFalse();
    assertThat(index.withoutOldest().oldest()).isEqualTo(5);
  }

  @Test
  void aMarkerRemovesWhatItPassesAndARecallFindsItsMessageById() {
    UnreadIndex index = UnreadIndex.EMPTY.with(3, "m3").with(5, "m5").with(7, "m7");
    // When the marker reaches 5: two are passed, seq 7 stays
    assertThat(index.countUpTo(5)).isEqualTo(2);
    assertThat(index.countUpTo(4)).isEqualTo(1);
    assertThat(index.withoutUpTo(5)).isEqualTo(UnreadIndex.EMPTY.with(7, "m7"));
    assertThat(index.withoutUpTo(100)).isSameAs(UnreadIndex.EMPTY);
    // When m5 is recalled it leaves; a recall of a message not there changes nothing
    assertThat(index.without("m5")).isEqualTo(UnreadIndex.EMPTY.with(3, "m3").with(7, "m7"));
    assertThat(index.without("never-sent")).isSameAs(index);
  }

  @Test
  void theStoredFormIsCompactAndRoundTripsAndGarbageIsRefused() {
    UnreadIndex index = UnreadIndex.EMPTY.with(1_000_000_000_000L, "a").with(1_000_000_000_001L, "b");
    byte[] stored = index.encode();
    // one byte of count, then per message a varint delta (6 bytes for the first, 1 after) and 8 bytes of hash
    assertThat(stored).hasSize(1 + 6 + 8 + 1 + 8);
    assertThat(UnreadIndex.decode(stored)).isEqualTo(index);
    assertThat(UnreadIndex.decode(UnreadIndex.EMPTY.encode())).isEqualTo(UnreadIndex.EMPTY);
    assertThatThrownBy(() -> UnreadIndex.decode(new byte[] {2, 1})).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> UnreadIndex.decode(new byte[] {0, 0})).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void totalsFollowTheBadgeAndCountTheCappedConversationsNotMuted() {
    ConversationState capped = ConversationState.empty().withUnread(5, 2, 3);
    ConversationState exact = ConversationState.empty().withUnread(3, 0, -1);
    // Given a new conversation with untracked unread
    ConversationTotals t = ConversationTotals.ZERO.plus(null, capped);
    assertThat(t).isEqualTo(new ConversationTotals(5, 1));
    // When its untracked are read: no longer capped
    t = t.plus(capped, exact);
    assertThat(t).isEqualTo(new ConversationTotals(3, 0));
    // When it is muted: out of the badge
    t = t.plus(exact, exact.withSettings(true, false));
    assertThat(t.isZero()).isTrue();
    assertThat(ConversationTotals.decode(new ConversationTotals(7, 2).encode()))
        .isEqualTo(new ConversationTotals(7, 2));
  }
}
