package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.internal.StoreKeys;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The merged sync page, on in-memory pages: oldest first across the inbox and the large groups (ties: inbox, then
 * groups in order), a group's entries never before the inbox entry that opened the user's interval nor an inbox
 * entry after the one that closed it, the page limit across all sources, and the cursor vector it hands out.
 */
class MergedSyncOrderTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  /** bob's interval in a group: conversation seqs from 0, opened by his inbox entry at seq 2, still open. */
  private static final ReadIntervals JOINED_AT_2 = ReadIntervals.NONE.apply(0, true, 2, 0);

  @Test
  void entriesGoOldestFirstWithTiesToTheInboxThenToTheGroupsInOrder() {
    Page<InboxEntry> inbox = page(false, inboxMessage(10, "i1", 1), inboxMessage(11, "i2", 3));
    Map<String, List<Page.Entry<InboxEntry>>> timelines = Map.of(
        "g", List.of(groupMessage(100, "g", 0, "g1", 2), groupMessage(101, "g", 1, "g2", 3)),
        "h", List.of(groupMessage(5, "h", 0, "h1", 2)));
    List<MergedSync.Group> groups = List.of(new MergedSync.Group("g", JOINED_AT_2, -1),
        new MergedSync.Group("h", JOINED_AT_2, -1));

    MergedSync.SyncPage all = MergedSync.merge("bob", inbox, 9, groups, source(timelines), 10);
    assertThat(ids(all)).containsExactly("i1", "g1", "h1", "i2", "g2");
    assertThat(all.entries()).extracting(MergedSync.Entry::groupId).containsExactly(null, "g", "h", null, "g");
    assertThat(all.entries()).extracting(MergedSync.Entry::seq).containsExactly(10L, 100L, 5L, 11L, 101L);
    assertThat(all.next()).isEqualTo(11);
    assertThat(all.hasMore()).isFalse();
    assertThat(all.cursor()).isEqualTo(SyncCursor.of(11, Map.of("g", 101L, "h", 5L)));
    assertThat(all.groups()).isEqualTo(groups);

    // The limit bounds the page across all sources; the cursor covers exactly what was handed out
    MergedSync.SyncPage three = MergedSync.merge("bob", inbox, 9, groups, source(timelines), 3);
    assertThat(ids(three)).containsExactly("i1", "g1", "h1");
    assertThat(three.next()).isEqualTo(10);
    assertThat(three.hasMore()).isTrue();
    assertThat(three.cursor()).isEqualTo(SyncCursor.of(10, Map.of("g", 100L, "h", 5L)));
  }

  @Test
  void aGroupEntryNeverGoesBeforeTheInboxEntryThatOpenedTheUsersInterval() {
    // bob's inbox: an older message at seq 15 stamped late, then his JOIN at seq 20; g's first message is older
    Page<InboxEntry> inbox = page(false, inboxMessage(15, "i15", 9), inboxEvent(20, InboxEntryType.CONVERSATION_JOINED,
        5));
    ReadIntervals joinedAt20 = ReadIntervals.NONE.apply(0, true, 20, 0);
    Map<String, List<Page.Entry<InboxEntry>>> timelines = Map.of("g", List.of(groupMessage(0, "g", 0, "g0", 1)));

    MergedSync.SyncPage page = MergedSync.merge("bob", inbox, 14,
        List.of(new MergedSync.Group("g", joinedAt20, -1)), source(timelines), 10);
    assertThat(ids(page)).containsExactly("i15", "joined", "g0");

    // While the JOIN lies beyond the inbox page, the group entry waits for the next page
    MergedSync.SyncPage cut = MergedSync.merge("bob", page(true, inboxMessage(15, "i15", 9)), 14,
        List.of(new MergedSync.Group("g", joinedAt20, -1)), source(timelines), 10);
    assertThat(ids(cut)).containsExactly("i15");
    assertThat(cut.hasMore()).isTrue();
    assertThat(cut.cursor()).isEqualTo(SyncCursor.of(15, Map.of()));
    // ... but not when the interval was opened by the last inbox entry of the page: it follows that entry
    MergedSync.SyncPage opened = MergedSync.merge("bob", page(true, inboxMessage(20, "i20", 9)), 14,
        List.of(new MergedSync.Group("g", joinedAt20, -1)), source(timelines), 10);
    assertThat(ids(opened)).containsExactly("i20", "g0");

    // An empty inbox page with more pending: the device has everything up to its cursor, nothing beyond it
    assertThat(ids(MergedSync.merge("bob", page(true), 20, List.of(new MergedSync.Group("g", joinedAt20, -1)),
        source(timelines), 10))).containsExactly("g0");
    MergedSync.SyncPage waiting = MergedSync.merge("bob", page(true), 19,
        List.of(new MergedSync.Group("g", joinedAt20, -1)), source(timelines), 10);
    assertThat(ids(waiting)).isEmpty();
    assertThat(waiting.hasMore()).isTrue();
    assertThat(waiting.next()).isEqualTo(19);
  }

  @Test
  void anInboxEntryNeverGoesBeforeTheGroupEntriesOfAnIntervalItClosed() {
    // bob read g from its timeline for conversation seqs [0, 5), opened at inbox seq 2, closed by his LEFT at 20
    ReadIntervals left = JOINED_AT_2.apply(5, false, 20, 0);
    Page<InboxEntry> inbox = page(false, inboxEvent(20, InboxEntryType.CONVERSATION_LEFT, 1));
    // g's last message before he left is stamped after the LEFT (clocks differ)
    Map<String, List<Page.Entry<InboxEntry>>> timelines = Map.of("g", List.of(groupMessage(7, "g", 3, "g3", 9)));

    MergedSync.SyncPage page = MergedSync.merge("bob", inbox, 19, List.of(new MergedSync.Group("g", left, -1)),
        source(timelines), 10);
    assertThat(ids(page)).containsExactly("g3", "left");
    assertThat(page.cursor()).isEqualTo(SyncCursor.of(20, Map.of("g", 7L)));

    // While more of that interval waits beyond the group's page, the LEFT waits too
    MergedSync.SyncPage partial = MergedSync.merge("bob", inbox, 19, List.of(new MergedSync.Group("g", left, -1)),
        (group, after, intervals, limit) -> new Page<>(timelines.get(group), 7L, true), 10);
    assertThat(ids(partial)).containsExactly("g3");
    assertThat(partial.hasMore()).isTrue();
    assertThat(partial.next()).isEqualTo(19);

    // An inbox entry before the closing one is not held back
    MergedSync.SyncPage before = MergedSync.merge("bob", page(false, inboxMessage(19, "i19", 8)), 18,
        List.of(new MergedSync.Group("g", left, -1)), source(timelines), 10);
    assertThat(ids(before)).containsExactly("i19", "g3");
  }

  @Test
  void positionsAreKeptForGroupsWithNothingNewAndNeverMoveBack() {
    // g: bob's device is at 40 and nothing new; h: no interval left (nothing to read) but position 0; k: none
    ReadIntervals none = ReadIntervals.NONE;
    List<MergedSync.Group> groups = List.of(new MergedSync.Group("g", JOINED_AT_2, 40),
        new MergedSync.Group("h", none, 0), new MergedSync.Group("k", JOINED_AT_2, -1));
    List<String> fetched = new ArrayList<>();
    MergedSync.SyncPage page = MergedSync.merge("bob", page(false), 3, groups, (group, after, intervals, limit) -> {
      fetched.add(group + ">" + after + "/" + limit);
      // the owner answers from its own position: entries at or before the device's are dropped
      return new Page<>(List.of(groupMessage(39, group, 0, "old", 0), groupMessage(40, group, 0, "old", 0)), 40L,
          false);
    }, 25);
    assertThat(fetched).containsExactly("g>40/25", "k>-1/25");
    assertThat(ids(page)).containsExactly("old", "old");
    assertThat(page.entries()).extracting(MergedSync.Entry::groupId).containsExactly("k", "k");
    assertThat(page.cursor()).isEqualTo(SyncCursor.of(3, Map.of("g", 40L, "h", 0L, "k", 40L)));
    assertThat(page.hasMore()).isFalse();
  }

  @Test
  void syncReadsTheDevicesCommittedPositionsOrTheGivenOnes() {
    // bob: inbox seqs 2, 4, 5; his phone committed inbox 3 and 100 in g; large groups g and h (bobby's x is not his)
    MemoryStoreView<InboxEntry> inbox = new MemoryStoreView<InboxEntry>().entry("bob", 2, inboxMessage(2, "i2", 1)
        .value()).entry("bob", 4, inboxMessage(4, "i4", 2).value()).entry("bob", 5, inboxMessage(5, "i5", 3).value());
    MemoryStoreView<Long> cursors = new MemoryStoreView<Long>().put(StoreKeys.cursor("bob", "phone"), 3L)
        .put(StoreKeys.groupPosition("bob", "phone", "g"), 100L);
    MemoryStoreView<byte[]> largeGroups = new MemoryStoreView<byte[]>()
        .put(StoreKeys.userGroup("bob", "g"), JOINED_AT_2.encode())
        .put(StoreKeys.userGroup("bob", "h"), JOINED_AT_2.encode())
        .put(StoreKeys.userGroup("bobby", "x"), JOINED_AT_2.encode());
    List<String> fetched = new ArrayList<>();
    MergedSync.GroupSource source = (group, after, intervals, limit) -> {
      fetched.add(group + ">" + after);
      assertThat(intervals).isEqualTo(JOINED_AT_2);
      return new Page<>(List.of(), after, false);
    };

    MergedSync.SyncPage committed = MergedSync.sync(inbox, cursors, largeGroups, "bob", "phone", 2, source);
    assertThat(ids(committed)).containsExactly("i4", "i5");
    assertThat(fetched).containsExactly("g>100", "h>-1");
    assertThat(committed.groups()).extracting(MergedSync.Group::groupId).containsExactly("g", "h");
    assertThat(committed.cursor()).isEqualTo(SyncCursor.of(5, Map.of("g", 100L)));

    fetched.clear();
    MergedSync.SyncPage given = MergedSync.sync(inbox, cursors, largeGroups, "bob", "phone",
        SyncCursor.of(4, Map.of("h", 8L)), 1, source);
    assertThat(ids(given)).containsExactly("i5");
    assertThat(given.hasMore()).isFalse();
    assertThat(fetched).containsExactly("g>-1", "h>8");

    // A device that never committed starts at the beginning
    assertThat(ids(MergedSync.sync(inbox, cursors, largeGroups, "bob", "tablet", 1, source))).containsExactly("i2");
  }

  @Test
  void aPageIsCutByBytesAcrossTheSourcesAndTheCursorCoversOnlyWhatWentOut() {
    // Given two inbox entries and two group entries, interleaved in time, each about 1 KB in JSON
    String kb = "x".repeat(1_000);
    Page<InboxEntry> inbox = page(false, fat(inboxMessage(10, "i1", 1), kb), fat(inboxMessage(11, "i2", 3), kb));
    List<Page.Entry<InboxEntry>> g = List.of(fat(groupMessage(100, "g", 0, "g1", 2), kb),
        fat(groupMessage(101, "g", 1, "g2", 4), kb));
    MergedSync.Plan plan = new MergedSync.Plan("bob", inbox, 9, List.of(new MergedSync.Group("g", JOINED_AT_2, -1)));
    long one = JsonSize.entry(inbox.entries().get(0).value());

    // When the page may hold two entries' bytes (and a little more)
    MergedSync.SyncPage cut = MergedSync.merge(plan, Map.of("g", new Page<>(g, 101L, false)), 10, 2 * one + 100);

    // Then the two oldest go out, the cursor covers exactly them, and hasMore says the rest
    assertThat(ids(cut)).containsExactly("i1", "g1");
    assertThat(cut.cursor()).isEqualTo(SyncCursor.of(10, Map.of("g", 100L)));
    assertThat(cut.hasMore()).isTrue();

    // and a budget smaller than one entry still lets one out
    assertThat(ids(MergedSync.merge(plan, Map.of("g", new Page<>(g, 101L, false)), 10, 1))).containsExactly("i1");
    // while an unlimited one takes everything
    assertThat(ids(MergedSync.merge(plan, Map.of("g", new Page<>(g, 101L, false)), 10, Long.MAX_VALUE)))
        .containsExactly("i1", "g1", "i2", "g2");
  }

  private static Page.Entry<InboxEntry> fat(Page.Entry<InboxEntry> e, String body) {
    return new Page.Entry<>(e.seq(), InboxEntry.newBuilder(e.value()).setBody(body).build());
  }

  private static MergedSync.GroupSource source(Map<String, List<Page.Entry<InboxEntry>>> timelines) {
    return (group, after, intervals, limit) -> {
      List<Page.Entry<InboxEntry>> out = timelines.getOrDefault(group, List.of()).stream()
          .filter(e -> e.seq() > after).limit(limit).toList();
      return new Page<>(out, out.isEmpty() ? after : out.get(out.size() - 1).seq(), false);
    };
  }

  @SafeVarargs
  @SuppressWarnings("varargs") // entries is only read: List.of copies it
  private static Page<InboxEntry> page(boolean hasMore, Page.Entry<InboxEntry>... entries) {
    return new Page<>(List.of(entries), entries.length == 0 ? null : entries[entries.length - 1].seq(), hasMore);
  }

  private static List<String> ids(MergedSync.SyncPage page) {
    return page.entries().stream().map(e -> e.value().getMessageId()).toList();
  }

  private static Page.Entry<InboxEntry> inboxMessage(long seq, String id, int second) {
    return new Page.Entry<>(seq, InboxEntry.newBuilder().setUserId("bob").setType(InboxEntryType.MESSAGE)
        .setConversationId("d:alice:bob").setConversationSeq(seq).setMessageId(id).setSenderId("alice")
        .setBody(id).setTimestamp(T0.plusSeconds(second)).build());
  }

  private static Page.Entry<InboxEntry> inboxEvent(long seq, InboxEntryType type, int second) {
    String id = type == InboxEntryType.CONVERSATION_JOINED ? "joined" : "left";
    return new Page.Entry<>(seq, InboxEntry.newBuilder().setUserId("bob").setType(type).setConversationId("g")
        .setConversationSeq(-1).setMessageId(id).setSenderId("bob").setTimestamp(T0.plusSeconds(second)).build());
  }

  private static Page.Entry<InboxEntry> groupMessage(long seq, String group, long conversationSeq, String id,
      int second) {
    return new Page.Entry<>(seq, InboxEntry.newBuilder().setUserId("#" + group).setType(InboxEntryType.MESSAGE)
        .setConversationId(group).setConversationSeq(conversationSeq).setMessageId(id).setSenderId("alice")
        .setBody(id).setTimestamp(T0.plusSeconds(second)).build());
  }
}
