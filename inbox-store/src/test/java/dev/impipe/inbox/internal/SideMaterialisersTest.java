package dev.impipe.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.inbox.query.ReadIntervals.Interval;
import dev.impipe.runtime.streams.VersionedValue;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.Test;

/**
 * The recall, membership and large-group materialisers as processors on a mock context with in-memory stores (no
 * driver): what each writes for each kind of inbox entry, and what it leaves alone. The driver tests
 * ({@code RecalledBodyTest}, {@code HistoryAccessTest}, {@code HybridSyncTest}) prove the same through the topology.
 */
class SideMaterialisersTest {

  private static final Instant AT = Instant.parse("2026-03-01T12:00:00Z");
  private static final long RETENTION = 1_000;

  private final MockProcessorContext<Void, Void> context = new MockProcessorContext<>();
  private long offset;

  // --- recall

  @Test
  void aRecallRemovesTheBodyOfTheOwnersLatestCopyOfTheMessageAndOnlyOnce() {
    KeyValueStore<Bytes, InboxEntry> inbox = inbox();
    RecallMaterialiser p = recall();
    // Given bob's inbox: another entry at seq 0, the message at 1, the same message again at 2 (redelivered)
    offset = 1;
    apply(p, inbox, "bob", message("bob", "m1", "hi"));
    apply(p, inbox, "bob", message("bob", "m1", "hi"));
    // When alice recalls it (recall m9)
    apply(p, inbox, "bob", recall("bob", "m9", "m1"));
    // Then the latest copy is rewritten without body, recalled by m9; the earlier one is left as it was
    assertThat(inbox.get(StoreKeys.entry("bob", 2)).getBody()).isNull();
    assertThat(inbox.get(StoreKeys.entry("bob", 2)).getRecalledBy()).isEqualTo("m9");
    assertThat(inbox.get(StoreKeys.entry("bob", 1)).getBody()).isEqualTo("hi");
    // When it is recalled again (m10): the first recall stays
    apply(p, inbox, "bob", recall("bob", "m10", "m1"));
    assertThat(inbox.get(StoreKeys.entry("bob", 2)).getRecalledBy()).isEqualTo("m9");
  }

  @Test
  void aRecallChangesNothingWhenTheIndexedSeqHoldsSomethingElse() {
    KeyValueStore<Bytes, InboxEntry> inbox = inbox();
    RecallMaterialiser p = recall();
    // Given m1 indexed at seq 0, m2 at seq 1
    apply(p, inbox, "bob", message("bob", "m1", "one"));
    apply(p, inbox, "bob", message("bob", "m2", "two"));
    // When seq 0 now holds m2 (not the message the index says) and seq 1 an entry of another type with m2's id
    InboxEntry m2 = inbox.get(StoreKeys.entry("bob", 1));
    InboxEntry read = entry("bob", InboxEntryType.READ).setMessageId("m2").build();
    inbox.put(StoreKeys.entry("bob", 0), m2);
    inbox.put(StoreKeys.entry("bob", 1), read);
    apply(p, inbox, "bob", recall("bob", "r1", "m1"));
    apply(p, inbox, "bob", recall("bob", "r2", "m2"));
    // Then neither is rewritten
    assertThat(inbox.get(StoreKeys.entry("bob", 0))).isEqualTo(m2);
    assertThat(inbox.get(StoreKeys.entry("bob", 1))).isEqualTo(read);
    // And an entry gone from the inbox (expired) is not written back
    inbox.delete(StoreKeys.entry("bob", 0));
    inbox.delete(StoreKeys.entry("bob", 1));
    apply(p, inbox, "bob", recall("bob", "r3", "m1"));
    apply(p, inbox, "bob", recall("bob", "r4", "m2"));
    assertThat(inbox.get(StoreKeys.entry("bob", 0))).isNull();
    assertThat(inbox.get(StoreKeys.entry("bob", 1))).isNull();
  }

  @Test
  void onlyTheOwnersOwnMessageEntriesAreIndexedAndOnlyTheirRecallsApply() {
    KeyValueStore<Bytes, InboxEntry> inbox = inbox();
    WindowStore<Bytes, Long> received = receivedIndex();
    RecallMaterialiser p = new RecallMaterialiser("inbox", "received");
    p.init(context);
    // Given entries it must ignore: no value, no key, another owner's key, a message without id, a READ with an id
    process(p, null, message("bob", "m0", "x"));
    process(p, "bob", null);
    process(p, "amy", message("bob", "m1", "x"));
    process(p, "bob", entry("bob", InboxEntryType.MESSAGE).build());
    process(p, "bob", entry("bob", InboxEntryType.READ).setMessageId("m2").build());
    // Then nothing is indexed
    for (String id : List.of("m0", "m1", "m2")) {
      try (var it = received.fetch(StoreKeys.received("bob", id), 0L, Long.MAX_VALUE)) {
        assertThat(it.hasNext()).as(id).isFalse();
      }
    }
    // Given m3 stored at seq 7 and indexed
    offset = 7;
    apply(p, inbox, "bob", message("bob", "m3", "hi"));
    InboxEntry stored = inbox.get(StoreKeys.entry("bob", 7));
    // When recalls it must ignore come: another owner's key, no ref, a READ pointing at it, an unknown message
    process(p, "amy", recall("bob", "r1", "m3"));
    process(p, "bob", entry("bob", InboxEntryType.RECALL).setMessageId("r2").build());
    process(p, "bob", entry("bob", InboxEntryType.READ).setMessageId("r3").setRefMessageId("m3").build());
    process(p, "bob", recall("bob", "r4", "m-unknown"));
    // Then the message keeps its body
    assertThat(inbox.get(StoreKeys.entry("bob", 7))).isEqualTo(stored);
  }

  @Test
  void aMessageWithoutRecordMetadataIsAnError() {
    inbox();
    receivedIndex();
    RecallMaterialiser p = new RecallMaterialiser("inbox", "received");
    p.init(context);
    assertThatThrownBy(() -> p.process(new Record<>("bob", message("bob", "m1", "x"), 0L)))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("no record metadata");
  }

  // --- memberships

  @Test
  void aJoinStoresItsStartALeaveDeletesItAndARejoinStartsAgain() {
    KeyValueStore<Bytes, byte[]> store = bytesStore("memberships");
    MembershipMaterialiser p = new MembershipMaterialiser("memberships");
    p.init(context);
    Bytes key = StoreKeys.userGroup("bob", "g1");
    // A join from conversation seq 5
    process(p, "bob", joined("bob", "g1", 5L, false));
    assertThat(MembershipMaterialiser.decode(store.get(key))).isEqualTo(5);
    // A message or a mode change leaves it as it is
    process(p, "bob", entry("bob", InboxEntryType.MESSAGE).setConversationId("g1").setMessageId("m").build());
    process(p, "bob", mode("bob", "g1", 9L, true));
    assertThat(MembershipMaterialiser.decode(store.get(key))).isEqualTo(5);
    // A leave deletes it; a rejoin starts from the new join; a negative start reads from 0
    process(p, "bob", left("bob", "g1", 12L));
    assertThat(store.get(key)).isNull();
    process(p, "bob", joined("bob", "g1", 20L, false));
    assertThat(MembershipMaterialiser.decode(store.get(key))).isEqualTo(20);
    process(p, "bob", joined("bob", "g1", -3L, false));
    assertThat(MembershipMaterialiser.decode(store.get(key))).isZero();
    // A join written before join boundaries existed: nothing readable
    process(p, "bob", joined("bob", "g1", null, false));
    assertThat(MembershipMaterialiser.decode(store.get(key))).isEqualTo(Long.MAX_VALUE);
    // A stored value with bytes after the start is not one this version wrote
    byte[] stored = MembershipMaterialiser.encode(5);
    byte[] longer = Arrays.copyOf(stored, stored.length + 1);
    assertThatThrownBy(() -> MembershipMaterialiser.decode(longer))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
  }

  @Test
  void membershipsIgnoreWhatTheInboxRejectsGroupTimelinesAndDirectChats() {
    KeyValueStore<Bytes, byte[]> store = bytesStore("memberships");
    MembershipMaterialiser p = new MembershipMaterialiser("memberships");
    p.init(context);
    process(p, "bob", null);
    process(p, null, joined("bob", "g1", 1L, false));
    process(p, "amy", joined("bob", "g1", 1L, false));
    process(p, "#g1", joined("#g1", "g1", 1L, false));
    process(p, "bob", joined("bob", "d:amy:bob", 1L, false));
    assertThat(store.approximateNumEntries()).isZero();
    // and a leave of another user's key deletes nothing
    process(p, "bob", joined("bob", "g1", 1L, false));
    process(p, "amy", left("bob", "g1", 2L));
    process(p, "bob", left("bob", "d:amy:bob", 2L));
    assertThat(store.get(StoreKeys.userGroup("bob", "g1"))).isNotNull();
  }

  // --- large groups

  @Test
  void theReadIntervalsFollowJoinsModeSwitchesAndLeaves() {
    KeyValueStore<Bytes, byte[]> store = bytesStore("groups");
    LargeGroupMaterialiser p = new LargeGroupMaterialiser("groups", RETENTION, true);
    p.init(context);
    Bytes key = StoreKeys.userGroup("bob", "g1");
    // A join of a small group (no read diffusion): nothing to remember
    offset = 10;
    process(p, "bob", joined("bob", "g1", 3L, false), 100);
    assertThat(store.get(key)).isNull();
    // The group turns large at conversation seq 8 (inbox seq 11): an interval opens
    process(p, "bob", mode("bob", "g1", 8L, true), 200);
    assertThat(intervals(store, key)).containsExactly(new Interval(8, Long.MAX_VALUE, 11, Long.MAX_VALUE,
        Long.MAX_VALUE));
    // A message of the group changes nothing
    process(p, "bob", entry("bob", InboxEntryType.MESSAGE).setConversationId("g1").setMessageId("m")
        .setTimelineFromSeq(9L).build(), 250);
    // bob leaves at seq 15 (inbox seq 13): the interval closes there
    process(p, "bob", left("bob", "g1", 15L), 300);
    assertThat(intervals(store, key)).containsExactly(new Interval(8, 15, 11, 13, 300));
    // and rejoins a large group at 20 (inbox seq 14)
    process(p, "bob", joined("bob", "g1", 20L, true), 400);
    assertThat(intervals(store, key)).containsExactly(new Interval(8, 15, 11, 13, 300),
        new Interval(20, Long.MAX_VALUE, 14, Long.MAX_VALUE, Long.MAX_VALUE));
    // One retention after the close, the next event drops the closed interval; the leave at exactly the cutoff
    // stays
    process(p, "bob", mode("bob", "g1", 21L, true), 300 + RETENTION);
    assertThat(intervals(store, key)).extracting(Interval::from).containsExactly(8L, 20L, 21L);
    process(p, "bob", left("bob", "g1", 30L), 301 + RETENTION);
    assertThat(intervals(store, key)).extracting(Interval::from).containsExactly(20L, 21L);
    // Once every interval is closed and older than the retention, the key goes
    process(p, "bob", left("bob", "g1", 31L), 302 + 2 * RETENTION);
    assertThat(store.get(key)).isNull();
  }

  @Test
  void entriesAtOrBelowWhatTheIntervalsReflectAreReplaysAndChangeNothing() {
    KeyValueStore<Bytes, byte[]> store = bytesStore("groups");
    LargeGroupMaterialiser p = new LargeGroupMaterialiser("groups", RETENTION, false);
    p.init(context);
    Bytes key = StoreKeys.userGroup("bob", "g1");
    // Given bob joined large group g1 at inbox seq 0, left at 1 and rejoined at 2
    process(p, "bob", joined("bob", "g1", 1L, true), 0);
    process(p, "bob", left("bob", "g1", 5L), 10);
    process(p, "bob", joined("bob", "g1", 6L, true), 20);
    List<Interval> applied = intervals(store, key);
    // When the same three entries come again at their seqs (a replay over carried-over intervals)
    offset = 0;
    process(p, "bob", joined("bob", "g1", 1L, true), 0);
    process(p, "bob", left("bob", "g1", 5L), 10);
    process(p, "bob", joined("bob", "g1", 6L, true), 20);
    // Then the intervals are as they were (no interval overlapping its own), and a later leave still applies
    assertThat(intervals(store, key)).isEqualTo(applied);
    process(p, "bob", left("bob", "g1", 9L), 30);
    assertThat(intervals(store, key)).extracting(Interval::to).containsExactly(5L, 9L);
  }

  @Test
  void largeGroupIntervalsKeptForeverWhenTheInboxDoesNotExpire() {
    KeyValueStore<Bytes, byte[]> store = bytesStore("groups");
    LargeGroupMaterialiser p = new LargeGroupMaterialiser("groups", RETENTION, false);
    p.init(context);
    Bytes key = StoreKeys.userGroup("bob", "g1");
    process(p, "bob", joined("bob", "g1", 1L, true), 0);
    process(p, "bob", left("bob", "g1", 5L), 10);
    process(p, "bob", joined("bob", "g1", 6L, false), 10 + 10 * RETENTION);
    assertThat(intervals(store, key)).containsExactly(new Interval(1, 5, 0, 1, 10));
  }

  @Test
  void largeGroupsIgnoreWhatTheInboxRejectsGroupTimelinesDirectChatsAndOldEntries() {
    KeyValueStore<Bytes, byte[]> store = bytesStore("groups");
    LargeGroupMaterialiser p = new LargeGroupMaterialiser("groups", RETENTION, true);
    p.init(context);
    process(p, "bob", null, 0);
    process(p, null, joined("bob", "g1", 1L, true), 0);
    process(p, "amy", joined("bob", "g1", 1L, true), 0);
    process(p, "#g1", joined("#g1", "g1", 1L, true), 0);
    process(p, "bob", joined("bob", "d:amy:bob", 1L, true), 0);
    process(p, "bob", joined("bob", "g1", null, true), 0);
    assertThat(store.approximateNumEntries()).isZero();
    // A join without record metadata is an error
    MockProcessorContext<Void, Void> bare = new MockProcessorContext<>();
    KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("groups"),
        Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled().build();
    s.init(bare.getStateStoreContext(), s);
    LargeGroupMaterialiser q = new LargeGroupMaterialiser("groups", RETENTION, true);
    q.init(bare);
    assertThatThrownBy(() -> q.process(new Record<>("bob", joined("bob", "g1", 1L, true), 0L)))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("no record metadata");
  }

  // --- helpers

  private RecallMaterialiser recall() {
    receivedIndex();
    RecallMaterialiser p = new RecallMaterialiser("inbox", "received");
    p.init(context);
    return p;
  }

  /** What the inbox materialiser does before the recall materialiser sees the record: stores it at its seq. */
  private void apply(RecallMaterialiser p, KeyValueStore<Bytes, InboxEntry> inbox, String key, InboxEntry e) {
    inbox.put(StoreKeys.entry(e.getUserId(), offset), e);
    process(p, key, e);
  }

  private void process(Processor<String, InboxEntry, Void, Void> p, String key, InboxEntry e) {
    process(p, key, e, AT.toEpochMilli());
  }

  private void process(Processor<String, InboxEntry, Void, Void> p, String key, InboxEntry e, long timestamp) {
    context.setRecordMetadata("im.inbox", 0, offset++);
    p.process(new Record<>(key, e, timestamp));
  }

  private static List<Interval> intervals(KeyValueStore<Bytes, byte[]> store, Bytes key) {
    return ReadIntervals.decode(store.get(key)).intervals();
  }

  private static InboxEntry.Builder entry(String user, InboxEntryType type) {
    return InboxEntry.newBuilder().setUserId(user).setType(type).setConversationId("g1").setConversationSeq(-1)
        .setTimestamp(AT);
  }

  private static InboxEntry message(String user, String messageId, String body) {
    return entry(user, InboxEntryType.MESSAGE).setMessageId(messageId).setBody(body).setSenderId("alice").build();
  }

  private static InboxEntry recall(String user, String messageId, String ref) {
    return entry(user, InboxEntryType.RECALL).setMessageId(messageId).setRefMessageId(ref).build();
  }

  private static InboxEntry joined(String user, String group, Long from, boolean large) {
    return entry(user, InboxEntryType.CONVERSATION_JOINED).setConversationId(group).setTimelineFromSeq(from)
        .setReadDiffusion(large).build();
  }

  private static InboxEntry mode(String user, String group, Long from, boolean large) {
    return entry(user, InboxEntryType.CONVERSATION_MODE).setConversationId(group).setTimelineFromSeq(from)
        .setReadDiffusion(large).build();
  }

  private static InboxEntry left(String user, String group, Long from) {
    return entry(user, InboxEntryType.CONVERSATION_LEFT).setConversationId(group).setTimelineFromSeq(from).build();
  }

  private KeyValueStore<Bytes, InboxEntry> inbox() {
    KeyValueStore<Bytes, InboxEntry> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("inbox"),
        Serdes.Bytes(), inboxSerde()).withLoggingDisabled().build();
    s.init(context.getStateStoreContext(), s);
    return s;
  }

  private WindowStore<Bytes, Long> receivedIndex() {
    WindowStore<Bytes, Long> s = Stores.windowStoreBuilder(Stores.inMemoryWindowStore("received",
        Duration.ofDays(1), Duration.ofMillis(1), true), Serdes.Bytes(), Serdes.Long()).withLoggingDisabled()
        .build();
    s.init(context.getStateStoreContext(), s);
    return s;
  }

  private KeyValueStore<Bytes, byte[]> bytesStore(String name) {
    KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name),
        Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled().build();
    s.init(context.getStateStoreContext(), s);
    return s;
  }

  /** InboxEntry values in Avro's single-object encoding: the materialisers never look at the encoding. */
  private static Serde<InboxEntry> inboxSerde() {
    return Serdes.serdeFrom((topic, e) -> {
      try {
        return e == null ? null : e.toByteBuffer().array();
      } catch (java.io.IOException x) {
        throw new java.io.UncheckedIOException(x);
      }
    }, (topic, b) -> {
      try {
        return b == null ? null : InboxEntry.fromByteBuffer(java.nio.ByteBuffer.wrap(b));
      } catch (java.io.IOException x) {
        throw new java.io.UncheckedIOException(x);
      }
    });
  }
}
