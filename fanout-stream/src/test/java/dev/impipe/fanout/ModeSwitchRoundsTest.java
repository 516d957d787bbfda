package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A switch to read diffusion tells the group's members in bounded rounds (here: threshold 2, at most 2 entries per
 * round, a round every 100 ms of wall-clock time), so no transaction's work grows with the group. Whatever happens
 * while it is under way (messages, joins, leaves, a restart), every member is told exactly once and, merging inbox and
 * timeline, sees every message exactly once.
 */
class ModeSwitchRoundsTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  private static final Duration ROUND = Duration.ofMillis(100);
  private static final int PER_ROUND = 2;
  private static final List<String> SEVEN = List.of("a", "b", "c", "d", "e", "f", "g");

  private String registryUrl;
  private ImTopics topics;
  private FanoutMetrics metrics;
  private TopologyTestDriver driver;
  private TestInputTopic<String, ChatMessage> messages;
  private TestInputTopic<String, MembershipChange> members;
  private TestOutputTopic<String, InboxEntry> inbox;
  /** Everything written to im.inbox, per key, in order: the test's model of each user's inbox. */
  private final Map<String, List<InboxEntry>> inboxes = new LinkedHashMap<>();
  private int n;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://mode-rounds-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    metrics = new FanoutMetrics(new SimpleMeterRegistry());
    driver = newDriver();
  }

  @AfterEach
  void tearDown() {
    driver.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void theSwitchIsWrittenInRoundsAndAMessageSentMeanwhileReachesEveryMemberOnce() {
    // Given a small group {a, b} with m1 in both inboxes, then c..g added (7 members, above the threshold)
    join("a");
    join("b");
    String m1 = send("a");
    SEVEN.subList(2, 7).forEach(this::join);
    drain();

    // When m2 switches the group: the first round (2 members, key order) is in m2's own transaction
    String m2 = send("b");
    assertThat(drain()).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactly("a:CONVERSATION_MODE", "b:CONVERSATION_MODE", "#g:MESSAGE");

    // And m3, sent while c..g have not been told yet, goes to the timeline only
    String m3 = send("c");
    assertThat(drain()).extracting(kv -> kv.key).containsExactly("#g");

    // Then each 100 ms (wall clock now T+100, +200, +300) tells the next 2 members, and nothing after that
    driver.advanceWallClockTime(ROUND);
    assertThat(modeEntriesTo(drain())).containsExactly("c", "d");
    driver.advanceWallClockTime(ROUND);
    assertThat(modeEntriesTo(drain())).containsExactly("e", "f");
    driver.advanceWallClockTime(ROUND);
    assertThat(modeEntriesTo(drain())).containsExactly("g");
    driver.advanceWallClockTime(ROUND.multipliedBy(5));
    assertThat(drain()).isEmpty();
    assertThat(pendingSwitches()).isZero();

    // And every member was told once, from m2's seq, and sees every message of its membership once
    long switchSeq = inboxes.get("#g").get(0).getConversationSeq();
    for (String member : SEVEN) {
      assertThat(inboxes.get(member)).filteredOn(e -> e.getType() == InboxEntryType.CONVERSATION_MODE)
          .singleElement().satisfies(e -> {
            assertThat(e.getTimelineFromSeq()).isEqualTo(switchSeq);
            assertThat(e.getReadDiffusion()).isTrue();
          });
    }
    assertThat(visibleTo("a")).containsExactly(m1, m2, m3);
    assertThat(visibleTo("b")).containsExactly(m1, m2, m3);
    for (String late : SEVEN.subList(2, 7)) {
      assertThat(visibleTo(late)).as(late).containsExactly(m2, m3);
    }
    assertThat(metrics.modeSwitches().count()).isEqualTo(1.0);
  }

  @Test
  void membersWhoJoinOrLeaveDuringTheSwitchAreToldOnceAndOnlyWhatTheyShouldSee() {
    // Given 7 members joined while the group was small (its first message switches it)
    SEVEN.forEach(this::join);
    String m1 = send("a");
    assertThat(modeEntriesTo(drain())).containsExactly("a", "b");

    // When f, not told yet, leaves: told first (so m1, sent before the leave, is in their read interval), then LEFT
    leave("f");
    assertThat(drain()).extracting(kv -> kv.key + ":" + kv.value.getType()).containsExactly(
        "f:CONVERSATION_MODE", "f:CONVERSATION_LEFT", "#g:CONVERSATION_LEFT");
    // And h joins during the switch: learns the mode from its JOINED entry, from after m1
    join("h");
    assertThat(drain()).singleElement().satisfies(kv -> {
      assertThat(kv.key).isEqualTo("h");
      assertThat(kv.value.getReadDiffusion()).isTrue();
    });
    String m2 = send("h");
    drain();

    // Then the rounds tell the others and skip f (gone) and h (joined after the switch)
    driver.advanceWallClockTime(ROUND);
    assertThat(modeEntriesTo(drain())).containsExactly("c", "d");
    driver.advanceWallClockTime(ROUND);
    assertThat(modeEntriesTo(drain())).containsExactly("e", "g");
    driver.advanceWallClockTime(ROUND);
    assertThat(drain()).isEmpty();

    for (String member : List.of("a", "b", "c", "d", "e", "g")) {
      assertThat(visibleTo(member)).as(member).containsExactly(m1, m2);
    }
    assertThat(visibleTo("f")).containsExactly(m1);
    assertThat(visibleTo("h")).containsExactly(m2);
    assertThat(inboxes.get("h")).noneMatch(e -> e.getType() == InboxEntryType.CONVERSATION_MODE);
  }

  @Test
  void aSwitchBackToWriteDiffusionWaitsUntilTheSwitchUnderWayIsDone() {
    // Given 7 members and a switch under way (a, b told)
    SEVEN.forEach(this::join);
    String m1 = send("a");
    drain();
    // When 5 leave (2 members: below 90% of 3, the group wants to be small again; each leaver is told the switch
    // before its leave) and b sends m2
    List.of("c", "d", "e", "f", "g").forEach(this::leave);
    assertThat(modeEntriesTo(drain())).containsExactly("c", "d", "e", "f", "g");
    String m2 = send("b");

    // Then m2 still goes to the timeline: the mode does not change until the switch's last round has run
    assertThat(drain()).extracting(kv -> kv.key).containsExactly("#g");
    driver.advanceWallClockTime(ROUND);
    assertThat(drain()).isEmpty();
    assertThat(pendingSwitches()).isZero();
    // And once it is done, the next message switches back at once (2 entries: fewer than the threshold)
    String m3 = send("a");
    assertThat(drain()).extracting(kv -> kv.key + ":" + kv.value.getType()).containsExactly(
        "a:CONVERSATION_MODE", "b:CONVERSATION_MODE", "a:MESSAGE", "b:MESSAGE");
    assertThat(visibleTo("a")).containsExactly(m1, m2, m3);
    assertThat(visibleTo("b")).containsExactly(m1, m2, m3);
    assertThat(visibleTo("d")).containsExactly(m1);
  }

  @Test
  void aRestartInTheMiddleOfASwitchResumesWhereTheLastRoundStoppedAndTellsEveryoneOnce() {
    // Given the switch of 7 members under way: m1 told a, b; the first timed round c, d
    SEVEN.forEach(this::join);
    String m1 = send("a");
    driver.advanceWallClockTime(ROUND);
    drain();

    // When the task restarts from its committed state (a new driver over the same stores' contents)
    TopologyTestDriver restarted = newDriver();
    copyStores(driver, restarted);
    driver.close();
    driver = restarted;
    String m2 = send("b");
    driver.advanceWallClockTime(ROUND);
    driver.advanceWallClockTime(ROUND);
    driver.advanceWallClockTime(ROUND);
    drain();

    // Then the rounds went on from e: every member told exactly once, every message seen once
    for (String member : SEVEN) {
      assertThat(inboxes.get(member)).as(member)
          .filteredOn(e -> e.getType() == InboxEntryType.CONVERSATION_MODE).hasSize(1);
      assertThat(visibleTo(member)).as(member).containsExactly(m1, m2);
    }
    assertThat(pendingSwitches()).isZero();
  }

  // --- helpers -------------------------------------------------------------------------------------------------

  private TopologyTestDriver newDriver() {
    TopologyTestDriver d = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults()
        .withLargeGroupThreshold(2).withModeSwitchRounds(PER_ROUND, ROUND), metrics),
        StreamsTestConfig.forDriver("fanout"), T0);
    messages = d.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ofMillis(1));
    members = d.createInputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), T0, Duration.ofMillis(1));
    inbox = d.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    return d;
  }

  private long pendingSwitches() {
    try (KeyValueIterator<String, byte[]> it =
        driver.<String, byte[]>getKeyValueStore(FanoutTopology.MODE_SWITCHES_STORE).all()) {
      long count = 0;
      for (; it.hasNext(); it.next()) {
        count++;
      }
      return count;
    }
  }

  /** The state of a task as a restart finds it: every store's committed contents. */
  private static void copyStores(TopologyTestDriver from, TopologyTestDriver to) {
    for (String name : List.of(FanoutTopology.MEMBERS_STORE, FanoutTopology.GROUPS_STORE,
        FanoutTopology.MODE_SWITCHES_STORE, FanoutTopology.CLOCK_STORE)) {
      KeyValueStore<Object, Object> target = to.getKeyValueStore(name);
      try (KeyValueIterator<Object, Object> it = from.<Object, Object>getKeyValueStore(name).all()) {
        it.forEachRemaining(kv -> target.put(kv.key, kv.value));
      }
    }
    for (String name : List.of(FanoutTopology.DEDUPE_STORE, FanoutTopology.SENT_STORE,
        FanoutTopology.PAST_MEMBERS_STORE)) {
      WindowStore<Bytes, byte[]> target = to.getWindowStore(name);
      WindowStore<Bytes, byte[]> source = from.getWindowStore(name);
      try (KeyValueIterator<Windowed<Bytes>, byte[]> it = source.all()) {
        it.forEachRemaining(kv -> target.put(kv.key.key(), kv.value, kv.key.window().start()));
      }
    }
  }

  private static List<String> modeEntriesTo(List<KeyValue<String, InboxEntry>> out) {
    return out.stream().filter(kv -> kv.value.getType() == InboxEntryType.CONVERSATION_MODE).map(kv -> kv.key)
        .toList();
  }

  /**
   * What a device of {@code user} should show: its inbox MESSAGEs, plus the group timeline's MESSAGEs whose
   * conversation seq falls in an interval where the user was a member and the group was read-diffused.
   */
  private List<String> visibleTo(String user) {
    List<String> seen = new ArrayList<>();
    List<long[]> readIntervals = new ArrayList<>(); // [from, to)
    long openFrom = -1;
    for (InboxEntry e : inboxes.getOrDefault(user, List.of())) {
      switch (e.getType()) {
        case MESSAGE -> seen.add(e.getMessageId());
        case CONVERSATION_JOINED, CONVERSATION_MODE, CONVERSATION_LEFT -> {
          if (openFrom >= 0) {
            readIntervals.add(new long[] {openFrom, e.getTimelineFromSeq()});
            openFrom = -1;
          }
          if (e.getType() != InboxEntryType.CONVERSATION_LEFT && Boolean.TRUE.equals(e.getReadDiffusion())) {
            openFrom = e.getTimelineFromSeq();
          }
        }
        default -> {
        }
      }
    }
    if (openFrom >= 0) {
      readIntervals.add(new long[] {openFrom, Long.MAX_VALUE});
    }
    for (InboxEntry e : inboxes.getOrDefault("#g", List.of())) {
      long seq = e.getConversationSeq();
      if (e.getType() == InboxEntryType.MESSAGE && readIntervals.stream().anyMatch(i -> seq >= i[0] && seq < i[1])) {
        seen.add(e.getMessageId());
      }
    }
    List<String> sorted = new ArrayList<>(seen);
    sorted.sort((x, y) -> Integer.compare(Integer.parseInt(x.substring(1)), Integer.parseInt(y.substring(1))));
    assertThat(sorted).as("no message twice for " + user).doesNotHaveDuplicates();
    return sorted;
  }

  private List<KeyValue<String, InboxEntry>> drain() {
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    out.forEach(kv -> inboxes.computeIfAbsent(kv.key, k -> new ArrayList<>()).add(kv.value));
    return out;
  }

  private void join(String user) {
    members.pipeInput("g", new MembershipChange("g", user, MembershipOp.JOIN, T0, null, null));
  }

  private void leave(String user) {
    members.pipeInput("g", new MembershipChange("g", user, MembershipOp.LEAVE, T0, null, null));
  }

  private String send(String from) {
    int i = ++n;
    ChatMessage m = ChatMessage.newBuilder().setMessageId("m" + i).setClientMsgId("c" + i).setConversationId("g")
        .setConversationType(ConversationType.GROUP).setGroupId("g").setType(MessageType.MESSAGE)
        .setSenderId(from).setBody("body " + i).setSentAt(T0).setAttributes(Map.of()).build();
    messages.pipeInput("g", m);
    return m.getMessageId();
  }
}
