package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.inbox.query.ReadIntervals.Interval;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.inbox.query.MergedSync;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.inbox.query.Timelines;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hybrid diffusion on the inbox-store side: the large-group store built from membership / mode entries, and the
 * merged device sync, fed by the real fan-out topology (threshold 2: large from 3 members) running in its own TopologyTestDriver.
 */
class HybridSyncTest {

  /** Wall-clock time when each test starts. */
  private static final Instant START = Instant.parse("2026-11-22T10:00:00Z");
  private static final long OPEN = Long.MAX_VALUE;

  @TempDir
  Path stateDir;

  private String registryUrl;
  private ImTopics topics;
  private TopologyTestDriver store;
  private TestInputTopic<String, InboxEntry> inboxIn;
  private TestInputTopic<String, DeviceCursor> cursorsIn;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://hybrid-sync-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
  }

  @AfterEach
  void tearDown() {
    if (store != null) {
      store.close();
    }
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void theLargeGroupStoreFollowsJoinsModeSwitchesAndLeavesAndOutlivesInboxRetention() {
    startStore(InboxStoreConfig.fromEnv(Map.of("IM_INBOX_RETENTION", "7d", "IM_INBOX_RETENTION_INTERVAL", "1m")));
    // Given (now = START) bob joins large group g from conversation seq 5 (inbox seq 0), joins small group s,
    // gets a direct message, and g turns small at 9 and large again at 12 (inbox seqs 3, 4)
    Instant tenDaysAgo = START.minus(Duration.ofDays(10));
    inboxIn.pipeInput("bob", event("bob", "g", InboxEntryType.CONVERSATION_JOINED, 5, true), tenDaysAgo);
    inboxIn.pipeInput("bob", event("bob", "s", InboxEntryType.CONVERSATION_JOINED, 0, false), tenDaysAgo);
    inboxIn.pipeInput("bob", TestData.message("bob", "d:alice:bob", "hi", tenDaysAgo), tenDaysAgo);
    inboxIn.pipeInput("bob", event("bob", "g", InboxEntryType.CONVERSATION_MODE, 9, false), tenDaysAgo);
    inboxIn.pipeInput("bob", event("bob", "g", InboxEntryType.CONVERSATION_MODE, 12, true), tenDaysAgo);
    // and alice joins g and leaves it at once (no message in between), a record keyed wrong is rejected
    inboxIn.pipeInput("alice", event("alice", "g", InboxEntryType.CONVERSATION_JOINED, 13, true), START);
    inboxIn.pipeInput("alice", event("alice", "g", InboxEntryType.CONVERSATION_LEFT, 13, false), START);
    inboxIn.pipeInput("mallory", event("bob", "g", InboxEntryType.CONVERSATION_LEFT, 14, false), START);

    // Then bob has one large group with an interval closed at 9 and one open from 12; nobody else has any
    assertThat(largeGroups("bob")).containsOnlyKeys("g");
    assertThat(largeGroups("bob").get("g").intervals()).containsExactly(
        new Interval(5, 9, 0, 3, tenDaysAgo.toEpochMilli()), new Interval(12, OPEN, 4, OPEN, OPEN));
    assertThat(largeGroups("alice")).isEmpty();

    // When the retention sweep runs (now = START + 1 min): bob's 10-day-old inbox entries expire
    store.advanceWallClockTime(Duration.ofMinutes(1));

    // Then his inbox is empty but he still reads g from 12 on
    assertThat(Timelines.after(inbox(), "bob", Timelines.START, 100).entries()).isEmpty();
    assertThat(largeGroups("bob").get("g").intervals()).contains(new Interval(12, OPEN, 4, OPEN, OPEN));

    // When he leaves at 20 (now), the interval closed 10 days ago is pruned and the new closed one kept
    inboxIn.pipeInput("bob", event("bob", "g", InboxEntryType.CONVERSATION_LEFT, 20, false), START);
    assertThat(largeGroups("bob").get("g").intervals()).containsExactly(
        new Interval(12, 20, 4, 8, START.toEpochMilli()));
  }

  @Test
  void everyMemberSeesEveryMessageOnceInConversationOrderAcrossThresholdCrossingsJoinsAndLeaves() {
    startStore(InboxStoreConfig.defaults());
    Fanout fanout = new Fanout();
    Map<String, Device> phones = new LinkedHashMap<>();
    for (String u : List.of("a", "b", "c", "d", "e")) {
      phones.put(u, new Device(u, "phone", 2));
    }
    Runnable syncPhones = () -> phones.values().forEach(Device::syncAll);

    // Given a small group {a, b} (threshold 2) and a direct chat between a and e
    fanout.join("a");
    fanout.join("b");
    fanout.send("a");
    fanout.direct("a", "e");
    syncPhones.run();
    // When c joins and b's message switches g to read diffusion
    fanout.join("c");
    fanout.send("b");
    fanout.send("c");
    fanout.direct("e", "a");
    syncPhones.run();
    // d joins the large group, c leaves it (3 members: still large), d writes
    fanout.join("d");
    fanout.send("c");
    fanout.leave("c");
    fanout.send("d");
    fanout.direct("a", "e");
    syncPhones.run();
    // d leaves: 2 members, so a's next message switches back to write diffusion
    fanout.leave("d");
    fanout.send("a");
    fanout.send("b");
    syncPhones.run();
    // c rejoins: large again from the next message; e joins and writes; a leaves and rejoins
    fanout.join("c");
    fanout.send("b");
    fanout.join("e");
    fanout.send("e");
    fanout.leave("a");
    fanout.send("c");
    fanout.join("a");
    fanout.send("e");
    fanout.direct("e", "a");
    fanout.send("a");

    // Then the phones (syncing after every step, two entries a page, committing each cursor) and tablets
    // (syncing everything at the end, three a page) see exactly what each member should
    syncPhones.run();
    assertThat(fanout.groupTimelineEntries).isGreaterThan(0);
    for (String u : phones.keySet()) {
      Device tablet = new Device(u, "tablet", 3);
      tablet.syncAll();
      for (Device device : List.of(phones.get(u), tablet)) {
        assertThat(device.messages).as("messages of %s's %s", u, device.device)
            .containsExactlyInAnyOrderElementsOf(fanout.expected.getOrDefault(u, List.of()));
        device.conversationSeqs.forEach((conversation, seqs) -> assertThat(seqs)
            .as("order of %s on %s's %s", conversation, u, device.device).isSorted().doesNotHaveDuplicates());
      }
    }
    // And a device that syncs once more gets nothing
    Device again = phones.get("a");
    assertThat(again.syncPage().entries()).isEmpty();
  }

  @Test
  void aLeaveAndRejoinOfALargeGroupWithNoMessageInBetweenShowsEveryLaterMessageOnce() {
    startStore(InboxStoreConfig.defaults());
    Fanout fanout = new Fanout();
    Device phone = new Device("b", "phone", 2);
    // Given a large group {a, b, c, d} (threshold 2) with messages b has synced
    fanout.join("a");
    fanout.join("b");
    fanout.join("c");
    fanout.join("d");
    fanout.send("a");
    fanout.send("c");
    phone.syncAll();
    // When b leaves and is added back with no message in between (both take effect at the same conversation seq;
    // 3 members keep the group large), then three messages are sent
    fanout.leave("b");
    phone.syncAll();
    fanout.join("b");
    fanout.send("a");
    fanout.send("c");
    fanout.send("d");

    // Then b's phone, and a new tablet, show every message b was a member for, each once, in order
    phone.syncAll();
    Device tablet = new Device("b", "tablet", 3);
    tablet.syncAll();
    for (Device device : List.of(phone, tablet)) {
      assertThat(device.messages).as("messages on b's %s", device.device)
          .containsExactlyElementsOf(fanout.expected.get("b"));
      assertThat(device.messages).containsSubsequence("m3", "m4", "m5");
    }
    assertThat(phone.syncPage().entries()).isEmpty();
  }

  @Test
  void aMessageSentBeforeTheSwitchToReadDiffusionAndRecalledAfterItIsSyncedWithoutBodyAndTheRecallOnce() {
    startStore(InboxStoreConfig.defaults());
    Fanout fanout = new Fanout();
    // Given a small group {a, b}: m1 is copied into a's and b's inboxes
    fanout.join("a");
    fanout.join("b");
    fanout.send("a");
    // and c joins, m2 switches the group to read diffusion
    fanout.join("c");
    fanout.send("b");

    // When a recalls m1
    String recall = fanout.recall("a", "m1");

    // Then a's and b's syncs serve m1 without its body, marked recalled, and show the recall once
    for (String user : List.of("a", "b")) {
      MergedSync.SyncPage page = new Device(user, "phone", 100).syncPage();
      assertThat(page.hasMore()).isFalse();
      assertThat(page.entries()).filteredOn(e -> "m1".equals(e.value().getMessageId())).singleElement()
          .satisfies(e -> {
            assertThat(e.value().getBody()).as(user).isNull();
            assertThat(e.value().getRecalledBy()).as(user).isEqualTo(recall);
          });
      assertThat(page.entries()).as(user).filteredOn(e -> e.value().getType() == InboxEntryType.RECALL)
          .extracting(e -> e.value().getRefMessageId()).containsExactly("m1");
    }
    // And c, who joined after m1, sees neither m1 nor its recall
    assertThat(new Device("c", "phone", 100).syncPage().entries())
        .noneMatch(e -> "m1".equals(e.value().getMessageId()) || "m1".equals(e.value().getRefMessageId()));
  }

  @Test
  void aGroupTimelineIsReadFromTheIntervalStartWhenTheDeviceHasNoPositionYet() {
    startStore(InboxStoreConfig.defaults());
    Fanout fanout = new Fanout();
    // Given a large group {a, b, c} with 6 messages, then d joins and 2 more are sent
    fanout.join("a");
    fanout.join("b");
    fanout.join("c");
    for (int i = 0; i < 6; i++) {
      fanout.send("a");
    }
    fanout.join("d");
    fanout.send("b");
    fanout.send("c");

    // When d's new device syncs (no committed position in g)
    Device device = new Device("d", "new", 10);
    MergedSync.SyncPage page = device.syncPage();

    // Then it starts at d's interval: its JOINED entry, then the two messages sent since, from #g
    assertThat(page.entries()).extracting(e -> e.groupId() == null ? "inbox:" + e.value().getType()
        : e.groupId() + ":" + e.value().getMessageId()).containsExactly("inbox:CONVERSATION_JOINED", "g:m7", "g:m8");
    assertThat(page.hasMore()).isFalse();
    // and the cursor vector holds the inbox seq and the #g position of the last entry
    SyncCursor cursor = page.cursor();
    assertThat(cursor.inbox()).isEqualTo(page.entries().get(0).seq());
    assertThat(cursor.groups()).containsExactly(Map.entry("g", page.entries().get(2).seq()));
    assertThat(SyncCursor.decode(cursor.encode())).isEqualTo(cursor);
  }

  @Test
  void aSyncAfterAGivenVectorStartsThereInsteadOfTheCommittedCursorAndTellsTheLargeGroups() {
    startStore(InboxStoreConfig.defaults());
    Fanout fanout = new Fanout();
    // Given a large group {a, b, c, d} with 3 messages, read by d's device page by page without committing
    fanout.join("a");
    fanout.join("b");
    fanout.join("c");
    fanout.join("d");
    for (int i = 0; i < 3; i++) {
      fanout.send("a");
    }
    Device device = new Device("d", "phone", 3);
    MergedSync.SyncPage first = device.syncPage();
    assertThat(first.hasMore()).isTrue();

    // When the next page is asked after the first page's vector (nothing committed)
    MergedSync.SyncPage second = device.syncPage(first.cursor());

    // Then it continues where the first ended: every message once, in order, across both pages
    List<String> ids = new ArrayList<>();
    for (MergedSync.SyncPage page : List.of(first, second)) {
      page.entries().stream().filter(e -> e.value().getType() == InboxEntryType.MESSAGE)
          .forEach(e -> ids.add(e.value().getMessageId()));
    }
    assertThat(ids).containsExactly("m1", "m2", "m3");
    assertThat(second.hasMore()).isFalse();
    // and without a vector the sync starts at the committed cursor again (the first page once more)
    assertThat(device.syncPage().entries()).isEqualTo(first.entries());
    // and each page names d's large group with its intervals and the inbox seq they reflect
    assertThat(second.groups()).singleElement().satisfies(g -> {
      assertThat(g.groupId()).isEqualTo("g");
      assertThat(g.intervals().ranges()).isEqualTo(largeGroups("d").get("g").ranges());
      assertThat(g.intervals().through()).isEqualTo(largeGroups("d").get("g").intervals().get(0).openedAt());
    });
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** The real fan-out topology; everything it writes to im.inbox is piped into the inbox store at once. */
  private final class Fanout {
    final Map<String, List<String>> expected = new HashMap<>();
    final Set<String> members = new LinkedHashSet<>();
    int groupTimelineEntries;
    private final TopologyTestDriver driver;
    private final TestInputTopic<String, ChatMessage> messages;
    private final TestInputTopic<String, MembershipChange> membership;
    private final TestOutputTopic<String, InboxEntry> out;
    private int n;

    Fanout() {
      driver = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults()
          .withLargeGroupThreshold(2), new FanoutMetrics(new SimpleMeterRegistry())),
          StreamsTestConfig.forDriver("fanout"), START);
      messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
          topics.messages().valueSerde().serializer(), START, Duration.ofMillis(1));
      membership = driver.createInputTopic(topics.groupMembers().name(),
          topics.groupMembers().keySerde().serializer(), topics.groupMembers().valueSerde().serializer(), START,
          Duration.ofMillis(1));
      out = driver.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
          topics.inbox().valueSerde().deserializer());
    }

    void join(String user) {
      membership.pipeInput("g", new MembershipChange("g", user, MembershipOp.JOIN, START, null, null));
      members.add(user);
      flush();
    }

    void leave(String user) {
      membership.pipeInput("g", new MembershipChange("g", user, MembershipOp.LEAVE, START, null, null));
      members.remove(user);
      flush();
    }

    /** A group message; every current member should see it. */
    void send(String from) {
      String id = "m" + ++n;
      messages.pipeInput("g", ChatMessage.newBuilder().setMessageId(id).setClientMsgId("c" + n)
          .setConversationId("g").setConversationType(ConversationType.GROUP).setGroupId("g")
          .setType(MessageType.MESSAGE).setSenderId(from).setBody("body " + n).setSentAt(sentAt(n))
          .build());
      members.forEach(u -> expected.computeIfAbsent(u, k -> new ArrayList<>()).add(id));
      flush();
    }

    /** {@code from} recalls {@code messageId}; returns the recall's id. */
    String recall(String from, String messageId) {
      String id = "m" + ++n;
      messages.pipeInput("g", ChatMessage.newBuilder().setMessageId(id).setClientMsgId("c" + n)
          .setConversationId("g").setConversationType(ConversationType.GROUP).setGroupId("g")
          .setType(MessageType.RECALL).setSenderId(from).setRefMessageId(messageId).setSentAt(sentAt(n))
          .build());
      flush();
      return id;
    }

    void direct(String from, String to) {
      String id = "m" + ++n;
      String conversation = Ids.direct(from, to);
      messages.pipeInput(conversation, ChatMessage.newBuilder().setMessageId(id).setClientMsgId("c" + n)
          .setConversationId(conversation).setConversationType(ConversationType.DIRECT).setRecipientId(to)
          .setType(MessageType.MESSAGE).setSenderId(from).setBody("body " + n).setSentAt(sentAt(n))
          .build());
      expected.computeIfAbsent(from, k -> new ArrayList<>()).add(id);
      expected.computeIfAbsent(to, k -> new ArrayList<>()).add(id);
      flush();
    }

    /**
     * Senders' clocks run backwards here: the merge prefers older timestamps, so only its constraints (an interval's
     * entries between the inbox entries that open and close it) can keep each conversation in order.
     */
    private Instant sentAt(int i) {
      return START.minusSeconds(i);
    }

    private void flush() {
      for (TestRecord<String, InboxEntry> r : out.readRecordsToList()) {
        if (Ids.isGroupTimeline(r.key())) {
          groupTimelineEntries++;
        }
        inboxIn.pipeInput(r);
      }
    }
  }

  /** A device that syncs through the merged sync and commits each page's cursor vector. */
  private final class Device {
    final String user;
    final String device;
    final int limit;
    final List<String> messages = new ArrayList<>();
    final Map<String, List<Long>> conversationSeqs = new TreeMap<>();

    Device(String user, String device, int limit) {
      this.user = user;
      this.device = device;
      this.limit = limit;
    }

    MergedSync.SyncPage syncPage() {
      return syncPage(null);
    }

    /** The page after {@code after} (null: after the committed cursor). */
    MergedSync.SyncPage syncPage(SyncCursor after) {
      StoreView<InboxEntry> entries = inbox();
      return MergedSync.sync(entries, StoreView.of(store.getKeyValueStore(InboxStoreTopology.CURSOR_STORE)),
          StoreView.of(store.getKeyValueStore(InboxStoreTopology.LARGE_GROUPS_STORE)), user, device, after, limit,
          (group, after2, intervals, max) -> Timelines.within(entries, Ids.groupTimeline(group), after2,
              ReadIntervals.parseRanges(intervals.ranges()), max));
    }

    void syncAll() {
      for (int pages = 0; pages < 100; pages++) {
        MergedSync.SyncPage page = syncPage();
        assertThat(page.entries().size()).isLessThanOrEqualTo(limit);
        for (MergedSync.Entry e : page.entries()) {
          if (e.value().getType() == InboxEntryType.MESSAGE) {
            messages.add(e.value().getMessageId());
            conversationSeqs.computeIfAbsent(e.value().getConversationId(), k -> new ArrayList<>())
                .add(e.value().getConversationSeq());
          }
        }
        page.cursor().components(device).forEach((d, seq) -> cursorsIn.pipeInput(user,
            DeviceCursor.newBuilder().setUserId(user).setDeviceId(d).setSeq(seq).build()));
        if (!page.hasMore()) {
          return;
        }
        assertThat(page.entries()).as("a page with more pending is never empty").isNotEmpty();
      }
      throw new AssertionError("sync of " + user + " never ended");
    }
  }

  private void startStore(InboxStoreConfig cfg) {
    java.util.Properties props = StreamsTestConfig.forDriver("inbox-store");
    props.put(org.apache.kafka.streams.StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    store = new TopologyTestDriver(InboxStoreTopology.build(topics, cfg), props, START);
    inboxIn = store.createInputTopic(topics.inbox().name(), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer());
    cursorsIn = store.createInputTopic(topics.deviceCursors().name(), topics.deviceCursors().keySerde().serializer(),
        topics.deviceCursors().valueSerde().serializer());
  }

  private StoreView<InboxEntry> inbox() {
    return StoreView.of(store.getKeyValueStore(InboxStoreTopology.INBOX_STORE));
  }

  private Map<String, ReadIntervals> largeGroups(String user) {
    KeyValueStore<Bytes, byte[]> groups = store.getKeyValueStore(InboxStoreTopology.LARGE_GROUPS_STORE);
    Map<String, ReadIntervals> out = new TreeMap<>();
    StoreView.of(groups).range(StoreKeys.userGroupsFrom(user), StoreKeys.userGroupsTo(user), false, 100)
        .forEach(kv -> out.put(StoreKeys.userGroupId(kv.key), ReadIntervals.decode(kv.value)));
    return out;
  }

  private static InboxEntry event(String user, String group, InboxEntryType type, long from, boolean read) {
    return InboxEntry.newBuilder().setUserId(user).setType(type).setConversationId(group).setConversationSeq(-1)
        .setTimestamp(START).setTimelineFromSeq(from).setReadDiffusion(type == InboxEntryType.CONVERSATION_LEFT
            ? null : read)
        .build();
  }
}
