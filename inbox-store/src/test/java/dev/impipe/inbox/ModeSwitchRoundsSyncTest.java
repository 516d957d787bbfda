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
import dev.impipe.inbox.query.MergedSync;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.inbox.query.StoreView;
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
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fan-out writes a switch to read diffusion in rounds (here at most 2 CONVERSATION_MODE entries per round, a
 * round each 100 ms): a member's entry can land well after the messages the group's timeline got since the switch.
 * Devices that sync (and commit their cursors) before, between and after the rounds still get every message exactly
 * once through the merged sync, also a member who read an earlier large period of the group.
 */
class ModeSwitchRoundsSyncTest {

  private static final Instant START = Instant.parse("2026-11-22T10:00:00Z");
  private static final Duration ROUND = Duration.ofMillis(100);
  private static final List<String> SEVEN = List.of("a", "b", "c", "d", "e", "f", "g");

  @TempDir
  Path stateDir;

  private String registryUrl;
  private ImTopics topics;
  private TopologyTestDriver store;
  private TestInputTopic<String, InboxEntry> inboxIn;
  private TestInputTopic<String, DeviceCursor> cursorsIn;
  private TopologyTestDriver fanout;
  private TestInputTopic<String, ChatMessage> messages;
  private TestInputTopic<String, MembershipChange> membership;
  private TestOutputTopic<String, InboxEntry> fanoutOut;
  private final Map<String, List<String>> expected = new HashMap<>();
  private final Set<String> members = new LinkedHashSet<>();
  private final Map<String, List<String>> seen = new LinkedHashMap<>();
  private int n;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://mode-rounds-sync-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    Properties props = StreamsTestConfig.forDriver("inbox-store");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    store = new TopologyTestDriver(InboxStoreTopology.build(topics, InboxStoreConfig.defaults()), props, START);
    inboxIn = store.createInputTopic(topics.inbox().name(), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer());
    cursorsIn = store.createInputTopic(topics.deviceCursors().name(), topics.deviceCursors().keySerde().serializer(),
        topics.deviceCursors().valueSerde().serializer());
    fanout = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults().withLargeGroupThreshold(2)
        .withModeSwitchRounds(2, ROUND), new FanoutMetrics(new SimpleMeterRegistry())),
        StreamsTestConfig.forDriver("fanout"), START);
    messages = fanout.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), START, Duration.ofMillis(1));
    membership = fanout.createInputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), START, Duration.ofMillis(1));
    fanoutOut = fanout.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
  }

  @AfterEach
  void tearDown() {
    fanout.close();
    store.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void devicesSyncingWhileTheRoundsAreUnderWayGetEveryMessageOnce() {
    // Given 7 members; m1 switches the group to read diffusion and the rounds finish (now START + 300 ms)
    SEVEN.forEach(this::join);
    send("a");
    rounds(3);
    syncAll();
    // and the group goes back to write diffusion (c..g leave, m2 reaches a and b's inboxes)
    SEVEN.subList(2, 7).forEach(this::leave);
    send("b");
    syncAll();

    // When c..g are added back and m3 switches the group again: a and b are told with m3, c..g not yet
    SEVEN.subList(2, 7).forEach(this::join);
    send("c");
    // and every device syncs (and commits) before most members' entries are written, then m4 comes
    syncAll();
    send("d");
    syncAll();
    assertThat(seen.get("g")).as("g, not told yet, reads nothing of the second large period").doesNotContain("m3");

    // Then once the rounds have told everyone (now + 300 ms), every device has every message of its membership once
    rounds(3);
    syncAll();
    for (String user : SEVEN) {
      assertThat(seen.get(user)).as(user).containsExactlyElementsOf(expected.get(user));
    }
    assertThat(expected.get("g")).containsExactly("m1", "m3", "m4");
  }

  private void rounds(int count) {
    for (int i = 0; i < count; i++) {
      fanout.advanceWallClockTime(ROUND);
      flush();
    }
  }

  private void join(String user) {
    membership.pipeInput("g", new MembershipChange("g", user, MembershipOp.JOIN, START, null, null));
    members.add(user);
    flush();
  }

  private void leave(String user) {
    membership.pipeInput("g", new MembershipChange("g", user, MembershipOp.LEAVE, START, null, null));
    members.remove(user);
    flush();
  }

  private void send(String from) {
    String id = "m" + ++n;
    messages.pipeInput("g", ChatMessage.newBuilder().setMessageId(id).setClientMsgId("c" + n)
        .setConversationId("g").setConversationType(ConversationType.GROUP).setGroupId("g")
        .setType(MessageType.MESSAGE).setSenderId(from).setBody("body " + n).setSentAt(START.plusSeconds(n))
        .build());
    members.forEach(u -> expected.computeIfAbsent(u, k -> new ArrayList<>()).add(id));
    flush();
  }

  private void flush() {
    for (TestRecord<String, InboxEntry> r : fanoutOut.readRecordsToList()) {
      inboxIn.pipeInput(r);
    }
  }

  /** Every member's phone syncs page after page (3 entries a page), committing each page's cursor. */
  private void syncAll() {
    for (String user : SEVEN) {
      boolean more = true;
      for (int pages = 0; more; pages++) {
        assertThat(pages).as("sync of " + user + " ends").isLessThan(100);
        StoreView<InboxEntry> entries = StoreView.of(store.getKeyValueStore(InboxStoreTopology.INBOX_STORE));
        MergedSync.SyncPage page = MergedSync.sync(entries,
            StoreView.of(store.getKeyValueStore(InboxStoreTopology.CURSOR_STORE)),
            StoreView.of(store.getKeyValueStore(InboxStoreTopology.LARGE_GROUPS_STORE)), user, "phone", null, 3,
            (group, after, intervals, max) -> Timelines.within(entries, Ids.groupTimeline(group), after,
                ReadIntervals.parseRanges(intervals.ranges()), max));
        for (MergedSync.Entry e : page.entries()) {
          if (e.value().getType() == InboxEntryType.MESSAGE) {
            seen.computeIfAbsent(user, k -> new ArrayList<>()).add(e.value().getMessageId());
          }
        }
        page.cursor().components("phone").forEach((d, seq) -> cursorsIn.pipeInput(user,
            DeviceCursor.newBuilder().setUserId(user).setDeviceId(d).setSeq(seq).build()));
        more = page.hasMore();
      }
    }
  }
}
