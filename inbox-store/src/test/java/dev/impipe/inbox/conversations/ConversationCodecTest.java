package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.runtime.streams.VersionedValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The stored state, the order keys and their cursors, the JSON, the route's id checks. */
class ConversationCodecTest {

  @Test
  void aStateSurvivesItsStoredFormWithAndWithoutALastMessage() {
    ConversationState.Last last = new ConversationState.Last(9, "m9", "bob", "MESSAGE", "hé ✓", 1234, false);
    ConversationState s = new ConversationState(false, true, 3, 8, 5, 2, 6, last, true, false, 1000, 2000);
    assertThat(ConversationState.decode(s.encode())).isEqualTo(s);
    ConversationState recalled = s.withLast(new ConversationState.Last(9, "m9", "bob", "MESSAGE", null, 1234, true))
        .withSettings(false, true);
    assertThat(ConversationState.decode(recalled.encode())).isEqualTo(recalled);
    assertThat(ConversationState.decode(ConversationState.empty().encode())).isEqualTo(ConversationState.empty());
    assertThatThrownBy(() -> ConversationState.decode(new byte[] {9})).isInstanceOf(
        VersionedValue.UnknownVersionException.class);
  }

  @Test
  void theListPositionReadsFromTheStoredBytesAsFromTheDecodedState() {
    ConversationState.Last last = new ConversationState.Last(9, "m9", "bob", "MESSAGE", "hi", 1234, false);
    ConversationState s = new ConversationState(true, false, 0, 3, 2, 0, -1, last, false, true, 987_654_321L, 5)
        .withIndex(UnreadIndex.EMPTY.with(8, "m8").with(9, "m9"));
    byte[] stored = s.encode();
    assertThat(ConversationState.storedPinned(stored)).isTrue();
    assertThat(ConversationState.storedActivityAt(stored)).isEqualTo(987_654_321L);
    byte[] unpinned = s.withSettings(true, false).withTimes(-5, 5).encode();
    assertThat(ConversationState.storedPinned(unpinned)).isFalse();
    assertThat(ConversationState.storedActivityAt(unpinned)).isEqualTo(-5);
    assertThatThrownBy(() -> ConversationState.storedPinned(new byte[] {9})).isInstanceOf(
        VersionedValue.UnknownVersionException.class);
  }

  @Test
  void orderKeysSortPinnedFirstThenNewestAndCursorsResumeAfterTheirKey() {
    ConversationState old = ConversationState.empty().withTimes(100, 100);
    ConversationState newer = ConversationState.empty().withTimes(200, 200);
    ConversationState pinnedOld = old.withSettings(false, true);
    List<org.apache.kafka.common.utils.Bytes> keys = new java.util.ArrayList<>(List.of(
        ConversationKeys.order("u", old, "a"), ConversationKeys.order("u", newer, "b"),
        ConversationKeys.order("u", pinnedOld, "c")));
    java.util.Collections.sort(keys);
    assertThat(keys.stream().map(ConversationKeys::orderConversation)).containsExactly("c", "b", "a");
    String cursor = ConversationKeys.cursor(keys.get(1));
    assertThat(ConversationKeys.orderAfter("u", cursor)).isGreaterThan(keys.get(1)).isLessThan(keys.get(2));
    // Another user's keys are outside the range of u
    assertThat(ConversationKeys.order("ua", old, "a")).isGreaterThan(ConversationKeys.orderTo("u"));
    assertThatThrownBy(() -> ConversationKeys.positionOf("not a cursor!")).isInstanceOf(
        IllegalArgumentException.class);
    assertThatThrownBy(() -> ConversationKeys.positionOf("AAAA")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theJsonHasTheContractFieldsAndALargeGroupSummaryTravelsIntact() throws Exception {
    ConversationState.Last last = new ConversationState.Last(9, "m9", "bob", "MESSAGE", "hi", 1234, false);
    Map<String, Object> json = ConversationJson.conversation("alice", "d:alice:bob", ConversationState.empty()
        .withLast(last).withUnread(2, 0, -1).withTimes(1234, 1300));
    assertThat(json).containsEntry("type", "DIRECT").containsEntry("peerId", "bob").containsEntry("member", true)
        .containsEntry("unread", 2L).containsEntry("readUpToSeq", -1L).containsEntry("muted", false)
        .containsEntry("pinned", false).containsEntry("updatedAt", 1300L);
    assertThat(ConversationJson.conversation("alice", "g", ConversationState.empty())).containsEntry("type",
        "GROUP").containsEntry("last", null).doesNotContainKey("peerId");
    assertThat(ConversationJson.peer("bob", "d:alice:bob")).isEqualTo("alice");
    ObjectMapper mapper = new ObjectMapper();
    LargeGroupCounts.Summary summary = new LargeGroupCounts.Summary(
        new ConversationState.Last(9, "m9", "bob", "MESSAGE", null, 1234, true), 7, true);
    assertThat(ConversationJson.summary(mapper.readTree(mapper.writeValueAsBytes(ConversationJson.summary(
        summary))))).isEqualTo(summary);
    assertThat(ConversationJson.summary(mapper.readTree(mapper.writeValueAsBytes(ConversationJson.summary(
        LargeGroupCounts.Summary.NONE))))).isEqualTo(LargeGroupCounts.Summary.NONE);
  }

  @Test
  void aPageIsTheUsersListWithItsTotalAndCursorAndARecalledLastIsMarked() {
    ConversationState.Last recalled = new ConversationState.Last(3, "m3", "bob", "MESSAGE", null, 5, true);
    ConversationList.ListPage page = new ConversationList.ListPage(List.of(new ConversationList.Item("team",
        ConversationState.empty().withLast(recalled).withMembership(true, true, 2), true)), 4, true, "next-cursor");
    Map<String, Object> json = ConversationJson.list("alice", page);
    assertThat(json).containsEntry("userId", "alice").containsEntry("unreadTotal", 4L).containsEntry("next",
        "next-cursor");
    @SuppressWarnings("unchecked")
    Map<String, Object> team = ((List<Map<String, Object>>) json.get("conversations")).get(0);
    assertThat(team).containsEntry("largeGroup", true).containsEntry("type", "GROUP")
        .containsEntry("unreadCapped", true);
    assertThat(json).containsEntry("unreadTotalCapped", true);
    @SuppressWarnings("unchecked")
    Map<String, Object> last = (Map<String, Object>) team.get("last");
    assertThat(last).containsEntry("recalled", true).containsEntry("body", null).containsEntry("messageId", "m3");
    Map<String, Object> plain = ConversationJson.conversation("alice", "d:alice:bob", ConversationState.empty()
        .withLast(new ConversationState.Last(3, "m3", "bob", "MESSAGE", "hi", 5, false)));
    @SuppressWarnings("unchecked")
    Map<String, Object> plainLast = (Map<String, Object>) plain.get("last");
    assertThat(plainLast).containsEntry("body", "hi").doesNotContainKey("recalled");
    assertThat(ConversationJson.peer("alice", "d:alice")).isNull();
    assertThat(ConversationJson.peer("alice", "d:alice:alice")).isEqualTo("alice");
  }

  @Test
  void trackedIsWhatTheIndexHoldsAndAStoredValueWithTrailingBytesIsRefused() {
    assertThat(ConversationState.empty().withUnread(5, 2, 9).tracked()).isEqualTo(3);
    byte[] stored = ConversationState.empty().encode();
    byte[] longer = java.util.Arrays.copyOf(stored, stored.length + 1);
    assertThatThrownBy(() -> ConversationState.decode(longer)).isInstanceOf(
        VersionedValue.MalformedValueException.class);
  }

  @Test
  void aLargeGroupCountsAboveTheMarkerWithinTheRangesAndMergesWithTheMembersCopies() {
    List<long[]> ranges = List.of(new long[] {2, 5}, new long[] {8, Long.MAX_VALUE});
    assertThat(LargeGroupCounts.above(ranges, 3)).containsExactly(new long[] {4, 5}, new long[] {8,
        Long.MAX_VALUE});
    assertThat(LargeGroupCounts.above(ranges, 9)).containsExactly(new long[] {10, Long.MAX_VALUE});
    assertThat(LargeGroupCounts.within(ranges, 6)).isFalse();
    assertThat(LargeGroupCounts.within(ranges, 4)).isTrue();
    ConversationState member = ConversationState.empty().withLast(new ConversationState.Last(1, "m1", "bob",
        "MESSAGE", "copy", 1, false)).withUnread(1, 0, -1);
    ConversationState.Last newer = new ConversationState.Last(9, "m9", "bob", "MESSAGE", "timeline", 2, false);
    ConversationState merged = LargeGroupCounts.merge(member, new LargeGroupCounts.Summary(newer, 3, false));
    assertThat(merged.unread()).isEqualTo(4);
    assertThat(merged.last()).isEqualTo(newer);
    assertThat(LargeGroupCounts.merge(member, LargeGroupCounts.Summary.NONE)).isEqualTo(member);
  }
}
