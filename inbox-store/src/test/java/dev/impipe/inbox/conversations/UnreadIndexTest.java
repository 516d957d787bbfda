package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The unread index kept inside a conversation's state. */
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
    // one byte of count, then per message a varint delta (6 bytes for the first, 1 after) and 4 bytes of hash
    assertThat(stored).hasSize(1 + 6 + 4 + 1 + 4);
    assertThat(UnreadIndex.decode(stored)).isEqualTo(index);
    assertThat(UnreadIndex.decode(UnreadIndex.EMPTY.encode())).isEqualTo(UnreadIndex.EMPTY);
    assertThatThrownBy(() -> UnreadIndex.decode(new byte[] {2, 1})).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> UnreadIndex.decode(new byte[] {0, 0})).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theOldestMessageCountsLikeAnyOtherAndAMarkerBelowItChangesNothing() {
    // Given messages at seqs 3 and 7
    UnreadIndex index = UnreadIndex.EMPTY.with(3, "m3").with(7, "m7");
    // Then the oldest is indexed, a replay of it is not added, and a marker at it passes exactly one
    assertThat(index.contains(3)).isTrue();
    assertThat(index.with(3, "m3")).isSameAs(index);
    assertThat(index.countUpTo(3)).isEqualTo(1);
    // When the marker is below every indexed message: the same index
    assertThat(index.withoutUpTo(2)).isSameAs(index);
  }

  @Test
  void aMessageIndexedBeforeOthersKeepsTheOthersFindableById() {
    // Given m7 indexed, then m3 inserted before it
    UnreadIndex index = UnreadIndex.EMPTY.with(7, "m7").with(3, "m3");
    // Then it is the same index as when they came in order, and m7 is still found by its id
    assertThat(index).isEqualTo(UnreadIndex.EMPTY.with(3, "m3").with(7, "m7"));
    assertThat(index.without("m7")).isEqualTo(UnreadIndex.EMPTY.with(3, "m3"));
  }

  @Test
  void indexesOfDifferentMessagesDiffer() {
    UnreadIndex a = UnreadIndex.EMPTY.with(1, "a");
    // Then another seq or another id is another index, equal ones hash alike, and the seqs are shown
    assertThat(a).isNotEqualTo(UnreadIndex.EMPTY.with(2, "a")).isNotEqualTo(UnreadIndex.EMPTY.with(1, "b"))
        .isNotEqualTo("a");
    assertThat(a.hashCode()).isEqualTo(UnreadIndex.EMPTY.with(1, "a").hashCode())
        .isNotEqualTo(UnreadIndex.EMPTY.with(2, "a").hashCode())
        .isNotEqualTo(UnreadIndex.EMPTY.with(1, "b").hashCode());
    assertThat(a.with(4, "d")).hasToString("UnreadIndex[1, 4]");
  }

  @Test
  void theMessageIdHashIsFnv1aFoldedTo32Bits() {
    // FNV-1a 64 test vectors, then its halves xored: the stored form depends on it
    assertThat(UnreadIndex.fnv1a64("")).isEqualTo(0xcbf29ce484222325L);
    assertThat(UnreadIndex.fnv1a64("a")).isEqualTo(0xaf63dc4c8601ec8cL);
    assertThat(UnreadIndex.hash("")).isEqualTo(0xcbf29ce4 ^ 0x84222325);
    assertThat(UnreadIndex.hash("a")).isEqualTo(0xaf63dc4c ^ 0x8601ec8c);
  }

  @Test
  void theFormerFormWithEightByteHashesReadsAsTheSameIndex() {
    // Given an index as state version 2 stored it: seq 3 and seq 5, each with FNV-1a 64 of its id in 8 bytes
    byte[] former = new byte[1 + 2 * (1 + 8)];
    former[0] = 2;
    former[1] = 3;
    java.nio.ByteBuffer.wrap(former, 2, 8).putLong(UnreadIndex.fnv1a64("m3"));
    former[10] = 2;
    java.nio.ByteBuffer.wrap(former, 11, 8).putLong(UnreadIndex.fnv1a64("m5"));
    // Then it is the index of today, a recall finds its messages, and it is stored 4 bytes a hash from then on
    UnreadIndex read = UnreadIndex.decode(former, Long.BYTES);
    assertThat(read).isEqualTo(UnreadIndex.EMPTY.with(3, "m3").with(5, "m5"));
    assertThat(read.without("m5")).isEqualTo(UnreadIndex.EMPTY.with(3, "m3"));
    assertThat(read.encode()).hasSize(1 + 2 * (1 + 4));
    // When the former form is read as today's, its lengths do not add up
    assertThatThrownBy(() -> UnreadIndex.decode(former)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void seqZeroRoundTripsButARepeatedSeqTrailingBytesOrAnOverlongVarintAreRefused() {
    // Given a message at seq 0 (a delta of 0 is allowed first only)
    UnreadIndex zero = UnreadIndex.EMPTY.with(0, "z").with(1, "o");
    assertThat(UnreadIndex.decode(zero.encode())).isEqualTo(zero);
    byte[] stored = UnreadIndex.EMPTY.with(5, "a").encode();
    // When the same seq appears twice (a second delta of 0)
    byte[] repeated = new byte[1 + 2 * 5];
    System.arraycopy(stored, 1, repeated, 1, 5);
    System.arraycopy(stored, 1, repeated, 6, 5);
    repeated[0] = 2;
    repeated[6] = 0;
    assertThatThrownBy(() -> UnreadIndex.decode(repeated)).isInstanceOf(IllegalArgumentException.class);
    // When a byte trails a valid index
    byte[] trailing = Arrays.copyOf(stored, stored.length + 1);
    assertThatThrownBy(() -> UnreadIndex.decode(trailing)).isInstanceOf(IllegalArgumentException.class);
    // When the input is empty, or a varint is cut off or longer than a long's ten bytes
    assertThatThrownBy(() -> UnreadIndex.decode(new byte[0])).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> UnreadIndex.decode(new byte[] {(byte) 0x80}))
        .isInstanceOf(IllegalArgumentException.class);
    byte[] overlong = new byte[11];
    Arrays.fill(overlong, (byte) 0x80);
    overlong[10] = 0;
    assertThatThrownBy(() -> UnreadIndex.decode(overlong)).isInstanceOf(IllegalArgumentException.class);
    // When a delta is negative (a ten-byte varint with the top bit set)
    byte[] negative = new byte[1 + 10 + 4];
    negative[0] = 1;
    Arrays.fill(negative, 1, 10, (byte) 0xff);
    negative[10] = 1;
    assertThatThrownBy(() -> UnreadIndex.decode(negative)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void anIndexAtItsCapTakesEachNewMessageAndLeavesTheIndexesBeforeItAsTheyWere() {
    // Given an index of three messages, kept at three as a conversation at its cap is
    UnreadIndex index = UnreadIndex.EMPTY.with(1, "m1").with(2, "m2").with(3, "m3");
    UnreadIndex first = index;
    java.util.List<UnreadIndex> seen = new java.util.ArrayList<>();
    for (long seq = 4; seq <= 1_000; seq++) {
      index = index.withoutOldest().with(seq, "m" + seq);
      seen.add(index);
    }
    // Then each index holds the three newest of its time, found by seq and by id, and stores as such
    for (int i = 0; i < seen.size(); i++) {
      long newest = i + 4;
      UnreadIndex at = seen.get(i);
      assertThat(at).isEqualTo(UnreadIndex.EMPTY.with(newest - 2, "m" + (newest - 2)).with(newest - 1,
          "m" + (newest - 1)).with(newest, "m" + newest));
      assertThat(at.oldest()).isEqualTo(newest - 2);
      assertThat(UnreadIndex.decode(at.encode())).isEqualTo(at);
      assertThat(at.without("m" + newest).size()).isEqualTo(2);
    }
    assertThat(first).isEqualTo(UnreadIndex.EMPTY.with(1, "m1").with(2, "m2").with(3, "m3"));
    assertThat(first.countUpTo(2)).isEqualTo(2);
    assertThat(first.contains(4)).isFalse();
  }

  @Test
  void twoIndexesMadeFromOneGoTheirOwnWays() {
    // Given one index and two made from it, each with a message of its own
    UnreadIndex base = UnreadIndex.EMPTY.with(1, "m1").with(2, "m2");
    UnreadIndex a = base.with(3, "a3");
    UnreadIndex b = base.with(3, "b3");
    UnreadIndex c = base.withoutOldest().with(5, "c5");
    // Then neither sees the other's message, and the one they came from is unchanged
    assertThat(a.without("a3")).isEqualTo(base);
    assertThat(b.without("b3")).isEqualTo(base);
    assertThat(a.without("b3")).isSameAs(a);
    assertThat(c).isEqualTo(UnreadIndex.EMPTY.with(2, "m2").with(5, "c5"));
    assertThat(base).isEqualTo(UnreadIndex.EMPTY.with(1, "m1").with(2, "m2")).hasToString("UnreadIndex[1, 2]");
    // And a message inserted before others, or the last one recalled, leaves them alone too
    assertThat(a.with(0, "m0").oldest()).isEqualTo(0);
    assertThat(a.oldest()).isEqualTo(1);
    assertThat(UnreadIndex.EMPTY.with(9, "m9").without("m9")).isSameAs(UnreadIndex.EMPTY);
    assertThat(a.withoutOldest().withoutOldest().withoutOldest()).isSameAs(UnreadIndex.EMPTY);
  }
}
