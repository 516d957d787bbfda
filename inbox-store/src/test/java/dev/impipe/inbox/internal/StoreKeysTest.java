package dev.impipe.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

class StoreKeysTest {

  @Test
  void entriesOfOneOwnerSortBySeqNumerically() {
    // Given seqs whose decimal strings would sort differently (9 < 10 < 256 < 2^40)
    long[] seqs = {256, 9, 1L << 40, 10, 0, Long.MAX_VALUE};
    TreeMap<Bytes, Long> sorted = new TreeMap<>();
    for (long seq : seqs) {
      sorted.put(StoreKeys.entry("bob", seq), seq);
    }

    // Then byte order (the store's order) is numeric order
    assertThat(new ArrayList<>(sorted.values())).containsExactly(0L, 9L, 10L, 256L, 1L << 40, Long.MAX_VALUE);
  }

  @Test
  void theRangeOfAnOwnerNeverReachesAnotherOwnerWhoseIdStartsTheSame() {
    // Given entries of bob, bobby, bo and a user whose id has bob's bytes plus a seq-looking tail
    TreeMap<Bytes, String> store = new TreeMap<>();
    for (String owner : List.of("bob", "bobby", "bo", "bob\u0000\u0000", "b")) {
      for (long seq = 0; seq < 3; seq++) {
        store.put(StoreKeys.entry(owner, seq), owner + "#" + seq);
      }
    }

    // When reading bob's whole range
    List<String> bobs = new ArrayList<>(store.subMap(StoreKeys.entry("bob", 0), true,
        StoreKeys.entry("bob", Long.MAX_VALUE), true).values());

    // Then only bob's entries come back
    assertThat(bobs).containsExactly("bob#0", "bob#1", "bob#2");
  }

  @Test
  void entryKeysDecodeToOwnerAndSeq() {
    Bytes key = StoreKeys.entry("Zoë 🐘", 123_456_789_012L);

    assertThat(StoreKeys.entryOwner(key)).isEqualTo("Zoë 🐘");
    assertThat(StoreKeys.entrySeq(key)).isEqualTo(123_456_789_012L);
  }

  @Test
  void cursorKeysOfDifferentUserDevicePairsNeverCollide() {
    // "ab"+"c" and "a"+"bc" concatenate to the same text; the string terminators keep them apart
    assertThat(StoreKeys.cursor("ab", "c")).isNotEqualTo(StoreKeys.cursor("a", "bc"));
    assertThat(StoreKeys.cursor("bob", "phone")).isEqualTo(StoreKeys.cursor("bob", "phone"));
  }

  @Test
  void aGroupPositionCommittedAsDeviceHashGroupIsItsOwnKeyKindAfterTheDevicesCursor() {
    // Given the device id the topic uses for phone's position in group g
    Bytes position = StoreKeys.committed("bob", "phone#g");

    // Then it is the (user, device, group) key, not a cursor of a device named "phone#g"
    assertThat(position).isEqualTo(StoreKeys.groupPosition("bob", "phone", "g"))
        .isNotEqualTo(StoreKeys.cursor("bob", "phone#g"));
    assertThat(StoreKeys.committed("bob", "phone")).isEqualTo(StoreKeys.cursor("bob", "phone"));
    // and sorts right after the device's cursor, before any other device of the user
    assertThat(position).isGreaterThan(StoreKeys.cursor("bob", "phone"))
        .isLessThan(StoreKeys.cursor("bob", "phone\u0001"));
  }

  @Test
  void theTimeIndexRangeBeforeACutoffHoldsExactlyTheOlderEntries() {
    // Given index entries at times 999, 1000 and 1001 (and the epoch)
    TreeMap<Bytes, Long> index = new TreeMap<>();
    for (long time : new long[] {0, 999, 1000, 1001}) {
      index.put(StoreKeys.timeIndex(time, StoreKeys.entry("u" + time, time)), time);
    }

    // When reading [start, before(1000)] (both bounds inclusive, as store ranges are)
    List<Long> older = new ArrayList<>(index.subMap(StoreKeys.timeIndexStart(), true,
        StoreKeys.timeIndexBefore(1000), true).values());

    // Then exactly the entries strictly older than the cutoff are in it
    assertThat(older).containsExactly(0L, 999L);
  }

  @Test
  void timeIndexKeysPointBackToTheirEntry() {
    Bytes entry = StoreKeys.entry("alice", 42);
    Bytes index = StoreKeys.timeIndex(1_700_000_000_000L, entry);

    assertThat(StoreKeys.timeIndexEntry(index)).isEqualTo(entry);
    assertThat(StoreKeys.timeIndexTime(index)).isEqualTo(1_700_000_000_000L);
    // A record without a timestamp (-1) is indexed at the epoch, so it sorts first and expires first
    assertThat(StoreKeys.timeIndexTime(StoreKeys.timeIndex(-1, entry))).isZero();
  }

  @Test
  void negativeSeqsAreRejected() {
    assertThatThrownBy(() -> StoreKeys.entry("bob", -1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("seq");
  }

  @Test
  void theUserGroupRangeOfAUserHoldsOnlyThatUsersGroups() {
    // Given user-group keys of bob, bobby, bo and "bob\0" (bob's bytes, then a NUL)
    TreeMap<Bytes, String> store = new TreeMap<>();
    for (String user : List.of("bob", "bobby", "bo", "bob\u0000")) {
      for (String group : List.of("g", "g2", "a-very-long-group-id-" + "x".repeat(100), "\u0000", "\uffff")) {
        store.put(StoreKeys.userGroup(user, group), user + "/" + group);
      }
    }

    // When reading bob's range
    List<String> bobs = new ArrayList<>(store.subMap(StoreKeys.userGroupsFrom("bob"), true,
        StoreKeys.userGroupsTo("bob"), true).values());

    // Then it is exactly bob's groups, and each key names its group
    assertThat(bobs).hasSize(5).allMatch(v -> v.startsWith("bob/"));
    assertThat(StoreKeys.userGroupId(StoreKeys.userGroup("bob", "g2"))).isEqualTo("g2");
  }

  @Test
  void aCommittedDeviceIdIsSplitAtItsFirstHashEvenWhenNothingPrecedesIt() {
    assertThat(StoreKeys.committed("bob", "phone#g")).isEqualTo(StoreKeys.groupPosition("bob", "phone", "g"));
    assertThat(StoreKeys.committed("bob", "#g")).isEqualTo(StoreKeys.groupPosition("bob", "", "g"));
    assertThat(StoreKeys.committed("bob", "phone")).isEqualTo(StoreKeys.cursor("bob", "phone"));
  }

  @Test
  void aCopiedKeyGivesBackItsPreviousSeqAndRefusesANegativeOne() {
    assertThat(StoreKeys.copiedPrevSeq(StoreKeys.copied("u1", 3, 4_242L))).isEqualTo(4_242L);
    assertThatThrownBy(() -> StoreKeys.copied("u1", 3, -1)).isInstanceOf(IllegalArgumentException.class);
  }
}
