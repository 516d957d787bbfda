package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.internal.StoreKeys;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The timeline reads on an in-memory store: page boundaries of a sync (after a seq, ascending) and of history
 * (before a seq, newest first, never before the reader's join), and the group-timeline read inside the user's
 * intervals, whose start is found by binary search.
 */
class TimelinesTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  private static final long OPEN = Long.MAX_VALUE;

  /** bob's inbox: seqs 0, 3, 5, 7, 9 (other users' records lie between), and bobby's entry right after. */
  private static MemoryStoreView<String> bobsInbox() {
    return new MemoryStoreView<String>().entry("bob", 0, "a").entry("bob", 3, "b").entry("bob", 5, "c")
        .entry("bob", 7, "d").entry("bob", 9, "e").entry("bobby", 1, "not bob's").entry("bo", 8, "not bob's");
  }

  @Test
  void aSyncPageHoldsAtMostLimitEntriesAfterTheCursorAndSaysWhetherMoreWait() {
    MemoryStoreView<String> inbox = bobsInbox();
    // From the start: seq 0 is included, two entries, more pending
    assertPage(Timelines.after(inbox, "bob", Timelines.START, 2), List.of(0L, 3L), 3L, true);
    // The next page starts right after the last seq handed out
    assertPage(Timelines.after(inbox, "bob", 3, 2), List.of(5L, 7L), 7L, true);
    // Exactly the rest fits the limit: no more pending
    assertPage(Timelines.after(inbox, "bob", 3, 3), List.of(5L, 7L, 9L), 9L, false);
    // A cursor between two seqs reads from the next one
    assertPage(Timelines.after(inbox, "bob", 4, 10), List.of(5L, 7L, 9L), 9L, false);
    // At the end: nothing, and the position stays where it is (never moves back)
    assertPage(Timelines.after(inbox, "bob", 9, 10), List.of(), 9L, false);
    assertPage(Timelines.after(inbox, "bob", Long.MAX_VALUE, 10), List.of(), Long.MAX_VALUE, false);
    // Nobody else's entries, however alike the ids
    assertThat(Timelines.after(inbox, "bob", Timelines.START, 100).entries()).extracting(Page.Entry::value)
        .containsExactly("a", "b", "c", "d", "e");
  }

  @Test
  void aHistoryPageIsNewestFirstBeforeTheGivenSeq() {
    MemoryStoreView<String> timeline = bobsInbox();
    // Without before: the newest entries
    assertPage(Timelines.before(timeline, "bob", OptionalLong.empty(), 2), List.of(9L, 7L), 7L, true);
    // Before 7: strictly older ones; exactly what is left fits: no more
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(7), 3), List.of(5L, 3L, 0L), 0L, false);
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(7), 2), List.of(5L, 3L), 3L, true);
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(1), 5), List.of(0L), 0L, false);
    // Before 0 (or below) there is nothing, and the position stays
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(0), 5), List.of(), 0L, false);
    // An empty history asked without before has no position
    Page<String> none = Timelines.before(timeline, "carol", OptionalLong.empty(), 5);
    assertThat(none.entries()).isEmpty();
    assertThat(none.next()).isNull();
    assertThat(none.hasMore()).isFalse();
  }

  @Test
  void aReaderSeesHistoryOnlyFromTheirJoinAndPagingStopsThere() {
    MemoryStoreView<String> timeline = bobsInbox();
    // Joined at conversation seq 5: 9, 7, 5 and no more
    assertPage(Timelines.before(timeline, "bob", OptionalLong.empty(), 10, 5), List.of(9L, 7L, 5L), 5L, false);
    assertPage(Timelines.before(timeline, "bob", OptionalLong.empty(), 2, 5), List.of(9L, 7L), 7L, true);
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(7), 2, 5), List.of(5L), 5L, false);
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(6), 2, 5), List.of(5L), 5L, false);
    // Asking before the join itself (or before it) gives nothing
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(5), 2, 5), List.of(), 5L, false);
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(4), 2, 5), List.of(), 4L, false);
    // A negative join seq reads from the start
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(3), 5, -7), List.of(0L), 0L, false);
    assertPage(Timelines.before(timeline, "bob", OptionalLong.empty(), 5, 0), List.of(9L, 7L, 5L, 3L, 0L), 0L,
        false);
  }

  @Test
  void aDeviceWithoutACommittedCursorStartsAtTheBeginning() {
    MemoryStoreView<Long> cursors = new MemoryStoreView<Long>().put(StoreKeys.cursor("bob", "phone"), 41L);
    assertThat(Timelines.cursor(cursors, "bob", "phone")).isEqualTo(41);
    assertThat(Timelines.cursor(cursors, "bob", "laptop")).isEqualTo(Timelines.START).isEqualTo(-1);
  }

  @Test
  void aGroupTimelineIsReadOnlyInsideTheUsersIntervalsInOrder() {
    // #g: seq s holds conversation seq 10 * s, s = 0..9
    MemoryStoreView<InboxEntry> g = new MemoryStoreView<>();
    for (int s = 0; s < 10; s++) {
      g.entry("#g", s, entry(10L * s));
    }
    List<long[]> ranges = List.of(new long[] {20, 50}, new long[] {70, OPEN});

    assertPage(Timelines.within(g, "#g", -1, ranges, 10), List.of(2L, 3L, 4L, 7L, 8L, 9L), 9L, false);
    // The limit cuts the page; the next one goes on after its last seq
    assertPage(Timelines.within(g, "#g", -1, ranges, 4), List.of(2L, 3L, 4L, 7L), 7L, true);
    assertPage(Timelines.within(g, "#g", 7, ranges, 4), List.of(8L, 9L), 9L, false);
    // Exactly the rest fits the limit: nothing more
    assertPage(Timelines.within(g, "#g", 3, ranges, 4), List.of(4L, 7L, 8L, 9L), 9L, false);
    // A position inside the first range skips what was read of it
    assertPage(Timelines.within(g, "#g", 2, List.of(new long[] {20, 50}), 10), List.of(3L, 4L), 4L, false);
    // Bounds are [from, to): 50 is out, 20 is in
    assertPage(Timelines.within(g, "#g", -1, List.of(new long[] {25, 50}), 10), List.of(3L, 4L), 4L, false);
    // Nothing at or after the ranges: an empty page at the position
    assertPage(Timelines.within(g, "#g", 4, List.of(new long[] {100, OPEN}), 10), List.of(), 4L, false);
    assertPage(Timelines.within(g, "#g", 9, ranges, 10), List.of(), 9L, false);
    assertPage(Timelines.within(g, "#g", -1, List.of(), 10), List.of(), -1L, false);
  }

  @Test
  void aLongGroupTimelineIsReadInBatchesThatAdvance() {
    // 1,000 entries at seqs 0, 2, 4, ... (the group's records lie between other owners'), conversation seq = index
    MemoryStoreView<InboxEntry> g = new MemoryStoreView<>(100);
    for (int i = 0; i < 1_000; i++) {
      g.entry("#g", 2L * i, entry(i));
    }
    // One range over 700 entries (several scan batches), ending mid-batch, then a second range
    List<long[]> ranges = List.of(new long[] {100, 800}, new long[] {900, 905});
    Page<InboxEntry> page = Timelines.within(g, "#g", -1, ranges, 2_000);
    List<Long> expected = new ArrayList<>();
    for (long i = 100; i < 800; i++) {
      expected.add(2 * i);
    }
    for (long i = 900; i < 905; i++) {
      expected.add(2 * i);
    }
    assertPage(page, expected, 2 * 904L, false);
    assertThat(g.takeReads()).as("batches of 256, and two binary searches").isLessThanOrEqualTo(35);

    // A page that ends exactly on the last entry of a range has nothing more
    g.takeReads();
    assertPage(Timelines.within(g, "#g", -1, List.of(new long[] {0, 300}), 300),
        expected(0, 300), 2 * 299L, false);
    // and one limit short of it has
    assertPage(Timelines.within(g, "#g", -1, List.of(new long[] {0, 300}), 299),
        expected(0, 299), 2 * 298L, true);
  }

  @Test
  void seekFindsTheFirstQualifyingEntryByBinarySearch() {
    // Seqs 0, 3, 6, ... (gaps), conversation seqs growing with them, several entries per conversation seq
    MemoryStoreView<InboxEntry> g = new MemoryStoreView<>(40);
    List<long[]> all = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      long seq = 3L * i;
      long conversationSeq = i / 3;
      g.entry("#g", seq, entry(conversationSeq));
      all.add(new long[] {seq, conversationSeq});
    }
    for (long from : new long[] {0, 1, 2, 3, 299, 300, 301, 1_200, 1_497, 1_498}) {
      for (long conversationSeq = -1; conversationSeq <= 168; conversationSeq++) {
        long want = -1;
        for (long[] e : all) {
          if (e[0] >= from && e[1] >= conversationSeq) {
            want = e[0];
            break;
          }
        }
        assertThat(Timelines.seek(g, "#g", from, conversationSeq))
            .as("first seq >= %d with conversation seq >= %d", from, conversationSeq).isEqualTo(want);
        // Logarithmic: two end reads, then one read per halving of 1,500 seqs
        assertThat(g.takeReads()).as("reads for from %d, conversation seq %d", from, conversationSeq)
            .isLessThanOrEqualTo(2 + 12);
      }
    }
    assertThat(Timelines.seek(new MemoryStoreView<>(), "#g", 0, 0)).isEqualTo(-1);
    // When the first entry from the position qualifies (conversation seq 1 at seq 9): one read, no search
    g.takeReads();
    assertThat(Timelines.seek(g, "#g", 9, 1)).isEqualTo(9);
    assertThat(g.takeReads()).isEqualTo(1);
  }

  @Test
  void aGroupPageFilledToExactlyItsBytesHoldsTheLastEntryThatFits() {
    // #g: seq s holds conversation seq 10 * s; entries 2, 3 and 4 are of one size
    MemoryStoreView<InboxEntry> g = new MemoryStoreView<>();
    for (int s = 0; s < 10; s++) {
      g.entry("#g", s, entry(10L * s));
    }
    long one = JsonSize.entry(entry(20));
    // When the range [20, 50) is read with room for exactly three: all three, nothing more in the range
    assertPage(Timelines.within(g, "#g", -1, List.of(new long[] {20, 50}), 10, 3 * one), List.of(2L, 3L, 4L), 4L,
        false);
    // and with a byte less: two, more waiting
    assertPage(Timelines.within(g, "#g", -1, List.of(new long[] {20, 50}), 10, 3 * one - 1), List.of(2L, 3L), 3L,
        true);
  }

  @Test
  void aHistoryPageAtTheReadersJoinReadsNothing() {
    MemoryStoreView<String> timeline = bobsInbox();
    timeline.takeReads();
    // When bob pages back to his join at seq 5: an empty page, without reading the store
    assertPage(Timelines.before(timeline, "bob", OptionalLong.of(5), 2, 5), List.of(), 5L, false);
    assertThat(timeline.takeReads()).isZero();
  }

  @Test
  void aDeviceWithoutAPositionInALargeGroupStartsAtTheBeginning() {
    MemoryStoreView<Long> cursors = new MemoryStoreView<Long>()
        .put(StoreKeys.groupPosition("bob", "phone", "g"), 17L);
    assertThat(Timelines.groupPosition(cursors, "bob", "phone", "g")).isEqualTo(17);
    assertThat(Timelines.groupPosition(cursors, "bob", "phone", "h")).isEqualTo(Timelines.START);
  }

  private static List<Long> expected(long fromIndex, long toIndex) {
    List<Long> out = new ArrayList<>();
    for (long i = fromIndex; i < toIndex; i++) {
      out.add(2 * i);
    }
    return out;
  }

  private static <V> void assertPage(Page<V> page, List<Long> seqs, Long next, boolean hasMore) {
    assertThat(page.entries()).extracting(Page.Entry::seq).containsExactlyElementsOf(seqs);
    assertThat(page.next()).as("next").isEqualTo(next);
    assertThat(page.hasMore()).as("hasMore").isEqualTo(hasMore);
  }

  private static InboxEntry entry(long conversationSeq) {
    return InboxEntry.newBuilder().setUserId("#g").setType(InboxEntryType.MESSAGE).setConversationId("g")
        .setConversationSeq(conversationSeq).setMessageId("m" + conversationSeq).setSenderId("alice")
        .setBody("x").setTimestamp(T0).build();
  }
}
