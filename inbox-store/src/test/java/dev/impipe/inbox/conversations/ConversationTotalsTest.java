package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.streams.VersionedValue;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The totals kept per user: the badge and the capped conversations, changed by one conversation at a time. */
class ConversationTotalsTest {

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

  @Test
  void aChangeTheBadgeDoesNotSeeLeavesTheTotalsAsTheyAreAndTheyNeverGoBelowZero() {
    ConversationTotals t = new ConversationTotals(4, 1);
    ConversationState muted = ConversationState.empty().withSettings(true, false).withUnread(3, 0, -1);
    // When a muted conversation's unread changes: the same totals
    assertThat(t.plus(muted, muted.withUnread(5, 0, -1))).isSameAs(t);
    assertThat(t.isZero()).isFalse();
    assertThat(new ConversationTotals(0, 1).isZero()).isFalse();
    // When more is taken away than counted (a lost update): zero, not negative
    ConversationState capped = ConversationState.empty().withUnread(9, 2, 3);
    assertThat(ConversationTotals.ZERO.plus(capped, null)).isEqualTo(ConversationTotals.ZERO);
  }

  @Test
  void aStoredTotalWithTrailingBytesIsMalformed() {
    byte[] stored = new ConversationTotals(7, 2).encode();
    byte[] trailing = Arrays.copyOf(stored, stored.length + 1);
    assertThatThrownBy(() -> ConversationTotals.decode(trailing))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
  }
}
