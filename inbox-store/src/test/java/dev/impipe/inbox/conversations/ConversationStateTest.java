package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.streams.VersionedValue;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The stored state's unread index and the two fields the list reads without decoding the rest. */
class ConversationStateTest {

  private static final ConversationState.Last LAST =
      new ConversationState.Last(9, "m9", "bob", "MESSAGE", "hi", 1234, false);

  @Test
  void theUnreadIndexSurvivesTheStoredFormAndABrokenOneIsMalformed() {
    // Given a state with two unread messages indexed
    ConversationState s = new ConversationState(true, false, 0, 3, 2, 0, -1, LAST, false, false, 100, 200)
        .withIndex(UnreadIndex.EMPTY.with(8, "m8").with(9, "m9"));
    // Then it reads back with its index
    assertThat(ConversationState.decode(s.encode()).index()).isEqualTo(s.index());
    // When the index bytes (last in the value, here the single count byte of an empty index) say 5 messages
    byte[] broken = ConversationState.empty().encode();
    broken[broken.length - 1] = 5;
    assertThatThrownBy(() -> ConversationState.decode(broken))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
  }

  @Test
  void aStateOfVersion2WithEightByteHashesReadsAsToday() {
    // Given a state stored by version 2: the same bytes up to the index, whose hashes had 8 bytes
    ConversationState s = new ConversationState(true, false, 0, 3, 1, 0, -1, LAST, true, true, 100, 200)
        .withIndex(UnreadIndex.EMPTY.with(9, "m9"));
    byte[] today = s.encode();
    byte[] index = {1, 9, 0, 0, 0, 0, 0, 0, 0, 0};
    java.nio.ByteBuffer.wrap(index, 2, 8).putLong(UnreadIndex.fnv1a64("m9"));
    byte[] v2 = Arrays.copyOf(today, today.length - 6 + index.length);
    v2[0] = 2;
    // the index is last, behind its length (an int32 of 6 today)
    java.nio.ByteBuffer.wrap(v2, today.length - 6 - 4, 4).putInt(index.length);
    System.arraycopy(index, 0, v2, today.length - 6, index.length);
    // Then it decodes to the same state, its fast fields read alike, and it is written as version 3 again
    assertThat(ConversationState.decode(v2)).isEqualTo(s);
    assertThat(ConversationState.storedPinned(v2)).isTrue();
    assertThat(ConversationState.storedActivityAt(v2)).isEqualTo(100);
    assertThat(ConversationState.storedBadge(v2)).isZero(); // muted
    assertThat(ConversationState.decode(v2).encode()).isEqualTo(today).startsWith(3);
  }

  @Test
  void pinnedAndActivityAreReadFromTheFirstBytesOfTheCurrentVersionOnly() {
    ConversationState s = new ConversationState(true, false, 0, 3, 2, 0, -1, LAST, false, true, 987_654_321L, 5);
    // Given only the bytes up to and including activityAt (version, flags, six int64 fields)
    byte[] prefix = Arrays.copyOf(s.encode(), 2 + 6 * Long.BYTES);
    // Then both read from them without decoding the rest
    assertThat(ConversationState.storedPinned(prefix)).isTrue();
    assertThat(ConversationState.storedActivityAt(prefix)).isEqualTo(987_654_321L);
    // and the badge's fields before it: unread 2, none untracked
    assertThat(ConversationState.storedBadge(prefix)).isEqualTo(2);
    assertThat(ConversationState.storedCappedInBadge(prefix)).isFalse();
    byte[] capped = Arrays.copyOf(new ConversationState(true, false, 0, 3, 7, 1, 2, LAST, false, false, 1, 5)
        .encode(), 2 + 6 * Long.BYTES);
    assertThat(ConversationState.storedBadge(capped)).isEqualTo(7);
    assertThat(ConversationState.storedCappedInBadge(capped)).isTrue();
    // When a byte fewer: the value is decoded in full, and is malformed
    byte[] shorter = Arrays.copyOf(prefix, prefix.length - 1);
    assertThatThrownBy(() -> ConversationState.storedPinned(shorter))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
    assertThatThrownBy(() -> ConversationState.storedActivityAt(shorter))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
    // When the value is of another version, however long: decode's error
    byte[] otherVersion = s.encode();
    otherVersion[0] = 9;
    assertThatThrownBy(() -> ConversationState.storedPinned(otherVersion))
        .isInstanceOf(VersionedValue.UnknownVersionException.class);
    assertThatThrownBy(() -> ConversationState.storedActivityAt(otherVersion))
        .isInstanceOf(VersionedValue.UnknownVersionException.class);
    assertThatThrownBy(() -> ConversationState.storedBadge(otherVersion))
        .isInstanceOf(VersionedValue.UnknownVersionException.class);
    assertThatThrownBy(() -> ConversationState.storedCappedInBadge(otherVersion))
        .isInstanceOf(VersionedValue.UnknownVersionException.class);
    // When there is no value: decode's error
    assertThatThrownBy(() -> ConversationState.storedPinned(null))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
  }

  @Test
  void everyFlagAndFieldSurvivesTheStoredFormAndTrailingBytesAreRefused() {
    ConversationState.Last recalled = new ConversationState.Last(9, "m9", "bob", "MESSAGE", null, 1234, true);
    // Given each flag set alone, and all set, with a recalled last message
    for (ConversationState s : List.of(
        new ConversationState(true, false, 1, 2, 3, 1, 4, recalled, false, false, 5, 6),
        new ConversationState(false, true, 1, 2, 3, 1, 4, LAST, false, false, 5, 6),
        new ConversationState(false, false, 1, 2, 3, 1, 4, null, true, false, 5, 6),
        new ConversationState(false, false, 1, 2, 3, 1, 4, LAST, false, true, 5, 6),
        new ConversationState(true, true, 1, 2, 3, 1, 4, LAST, true, true, 5, 6))) {
      // Then it reads back as it was, and the list reads pinned from the bytes alike
      byte[] stored = s.encode();
      assertThat(ConversationState.decode(stored)).isEqualTo(s);
      assertThat(ConversationState.storedPinned(stored)).isEqualTo(s.pinned());
      // and its badge (unread unless muted; capped when some are untracked, unless muted) from the bytes too
      assertThat(ConversationState.storedBadge(stored)).isEqualTo(ConversationRules.badge(s));
      assertThat(ConversationState.storedCappedInBadge(stored)).isEqualTo(ConversationRules.cappedInBadge(s));
      // When a byte trails it: malformed
      byte[] trailing = Arrays.copyOf(stored, stored.length + 1);
      assertThatThrownBy(() -> ConversationState.decode(trailing))
          .isInstanceOf(VersionedValue.MalformedValueException.class);
    }
  }

  @Test
  void eachWitherChangesOnlyItsFields() {
    ConversationState s = new ConversationState(true, false, 1, 2, 5, 2, 4, LAST, false, false, 5, 6);
    // Then tracked is the unread still in the index
    assertThat(s.tracked()).isEqualTo(3);
    assertThat(s.withMembership(false, true, 7))
        .isEqualTo(new ConversationState(false, true, 7, 2, 5, 2, 4, LAST, false, false, 5, 6));
    assertThat(s.withRead(8, 1, 0, -1))
        .isEqualTo(new ConversationState(true, false, 1, 8, 1, 0, -1, LAST, false, false, 5, 6));
    assertThat(s.withUnread(1, 0, -1))
        .isEqualTo(new ConversationState(true, false, 1, 2, 1, 0, -1, LAST, false, false, 5, 6));
    assertThat(s.withLast(null))
        .isEqualTo(new ConversationState(true, false, 1, 2, 5, 2, 4, null, false, false, 5, 6));
    assertThat(s.withSettings(true, true))
        .isEqualTo(new ConversationState(true, false, 1, 2, 5, 2, 4, LAST, true, true, 5, 6));
    assertThat(s.withTimes(7, 8))
        .isEqualTo(new ConversationState(true, false, 1, 2, 5, 2, 4, LAST, false, false, 7, 8));
  }

  @Test
  void theBadgeAndItsCapAreReadFromTheStoredBytesAsFromTheState() {
    for (boolean muted : new boolean[] {false, true}) {
      for (long untracked : new long[] {0, 3}) {
        ConversationState s = new ConversationState(true, false, 0, 3, 7, untracked, untracked > 0 ? 2 : -1, LAST,
            muted, false, 100, 200);
        byte[] stored = s.encode();
        assertThat(ConversationState.storedBadge(stored)).as("muted %s", muted).isEqualTo(muted ? 0 : 7);
        assertThat(ConversationState.storedCappedInBadge(stored)).as("muted %s, untracked %d", muted, untracked)
            .isEqualTo(!muted && untracked > 0);
      }
    }
  }
}
