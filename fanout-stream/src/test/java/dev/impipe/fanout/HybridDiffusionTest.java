package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.internal.SentCodec;
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
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Hybrid diffusion with a threshold of 2 (large from 3 members): a large group's messages go once to its timeline ({@code #g});
 * members learn the mode from JOINED / MODE entries and, merging both, see every message once.
 */
class HybridDiffusionTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  private String registryUrl;
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
    registryUrl = "mock://hybrid-" + UUID.randomUUID();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    metrics = new FanoutMetrics(new SimpleMeterRegistry());
    driver = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults().withLargeGroupThreshold(2),
        metrics), StreamsTestConfig.forDriver("fanout"));
    messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ofMillis(1));
    members = driver.createInputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), T0, Duration.ofMillis(1));
    inbox = driver.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
  }

  @AfterEach
  void tearDown() {
    driver.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void crossingTheThresholdBothWaysLosesAndDuplicatesNothing() {
    // Given a small group {a, b}: write diffusion
    join("a");
    join("b");
    String m1 = send("a");
    assertThat(drain()).extracting(kv -> kv.key).containsExactly("a", "b", "a", "b");

    // When c joins (3 members, above the threshold), nothing switches yet: the switch happens at the next message
    join("c");
    List<KeyValue<String, InboxEntry>> joined = drain();
    assertThat(joined).singleElement().satisfies(kv -> {
      assertThat(kv.value.getType()).isEqualTo(InboxEntryType.CONVERSATION_JOINED);
      assertThat(kv.value.getReadDiffusion()).isFalse();
    });

    // Then m2 switches the group to read diffusion at its own seq: every member is told, m2 goes to #g only
    String m2 = send("b");
    List<KeyValue<String, InboxEntry>> switched = drain();
    assertThat(switched).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactlyInAnyOrder("a:CONVERSATION_MODE", "b:CONVERSATION_MODE", "c:CONVERSATION_MODE", "#g:MESSAGE");
    long switchSeq = switched.get(0).value.getTimelineFromSeq();
    assertThat(switched).filteredOn(kv -> kv.key.equals("#g")).singleElement()
        .satisfies(kv -> assertThat(kv.value.getConversationSeq()).isEqualTo(switchSeq));

    // d joins a large group: told to read the timeline from the next seq on
    join("d");
    assertThat(drain()).singleElement().satisfies(kv -> assertThat(kv.value.getReadDiffusion()).isTrue());
    String m3 = send("c");
    assertThat(drain()).extracting(kv -> kv.key).containsExactly("#g");
    assertThat(metrics.writesSaved().count()).isEqualTo(2.0 + 3.0);

    // When c and d leave (2 members < 90% of 3), the next message switches back to write diffusion
    leave("c");
    leave("d");
    String m4 = send("a");
    List<KeyValue<String, InboxEntry>> back = drain();
    assertThat(back).extracting(kv -> kv.key + ":" + kv.value.getType()).containsExactlyInAnyOrder(
        "c:CONVERSATION_LEFT", "#g:CONVERSATION_LEFT", "d:CONVERSATION_LEFT", "#g:CONVERSATION_LEFT",
        "a:CONVERSATION_MODE", "b:CONVERSATION_MODE", "a:MESSAGE", "b:MESSAGE");
    // The leaves of a large group are also in its timeline, naming the leaver, in order with its messages
    assertThat(back).filteredOn(kv -> kv.key.equals("#g")).extracting(kv -> kv.value.getSenderId())
        .containsExactly("c", "d");

    // Then merging each inbox with the group timeline by the membership/mode entries gives every message once
    assertThat(visibleTo("a")).containsExactly(m1, m2, m3, m4);
    assertThat(visibleTo("b")).containsExactly(m1, m2, m3, m4);
    assertThat(visibleTo("c")).containsExactly(m2, m3);
    assertThat(visibleTo("d")).containsExactly(m3);
    assertThat(metrics.modeSwitches().count()).isEqualTo(2.0);
  }

  @Test
  void aGroupBornLargeIsReadDiffusedFromItsFirstMessage() {
    join("a");
    join("b");
    join("c");
    String m1 = send("a");
    drain();
    join("d");
    String m2 = send("d");
    drain();
    assertThat(visibleTo("a")).containsExactly(m1, m2);
    assertThat(visibleTo("d")).containsExactly(m2);
    assertThat(inboxes.get("a")).noneMatch(e -> e.getType() == InboxEntryType.MESSAGE);
  }

  @Test
  void readMarkersInALargeGroupStillReachTheReadersOwnInbox() {
    join("a");
    join("b");
    join("c");
    send("a");
    drain();
    messages.pipeInput("g", base("b").setType(MessageType.READ).setReadUpToSeq(0L).build());
    assertThat(drain()).extracting(kv -> kv.key + ":" + kv.value.getType()).containsExactly("b:READ");
  }

  @Test
  void recallInALargeGroupGoesOnceToTheGroupTimelineAndOnlyFromTheSender() {
    // Given a large group (threshold 2) and a message from a
    join("a");
    join("b");
    join("c");
    String m1 = send("a");
    drain();

    // When b tries to recall a's message, then a recalls it
    messages.pipeInput("g", base("b").setType(MessageType.RECALL).setBody(null).setRefMessageId(m1).build());
    messages.pipeInput("g", base("a").setType(MessageType.RECALL).setBody(null).setRefMessageId(m1).build());

    // Then b only learns that the recall was refused, and a's recall is written once, to the group's timeline
    // (members read it from there)
    assertThat(drain()).extracting(kv -> kv.key + ":" + kv.value.getType() + ":" + kv.value.getRefMessageId())
        .containsExactly("b:REJECTED:" + m1, "#g:RECALL:" + m1);
    // which saved a write per other member, as m1 did
    assertThat(metrics.writesSaved().count()).isEqualTo(2.0 + 2.0);
  }

  @Test
  void aRecallAfterTheSwitchToReadDiffusionReachesTheInboxCopiesOfAMessageSentBeforeIt() {
    // Given a small group {a, b} (write diffusion) and a message from a: a copy in a's and b's inbox
    join("a");
    join("b");
    String m1 = send("a");
    // and c joins, the next message switches the group to read diffusion (m2 goes to #g only)
    join("c");
    send("b");
    drain();

    // When a recalls m1, sent before the switch
    messages.pipeInput("g", base("a").setType(MessageType.RECALL).setBody(null).setRefMessageId(m1).build());

    // Then the RECALL goes where m1 went: to the inboxes holding its copies (a and b), not to c, who never got it,
    // and not to #g, which has no copy of it (the timeline's RECALL would show the recall a second time to a and b)
    assertThat(drain()).extracting(kv -> kv.key + ":" + kv.value.getType() + ":" + kv.value.getRefMessageId())
        .containsExactlyInAnyOrder("a:RECALL:" + m1, "b:RECALL:" + m1);
  }

  @Test
  void aRecallAfterTheSwitchBackToWriteDiffusionRemovesTheTimelineCopyAndTellsEveryoneWhoGotIt() {
    // Given a large group {a, b, c} (threshold 2): m1 goes to #g only
    join("a");
    join("b");
    join("c");
    String m1 = send("a");
    // and c leaves (2 members, below 90% of 3): the next message switches the group back to write diffusion
    leave("c");
    send("b");
    drain();

    // When a recalls m1
    messages.pipeInput("g", base("a").setType(MessageType.RECALL).setBody(null).setRefMessageId(m1).build());

    // Then #g gets it (its copy loses the body; at a seq outside every read interval, so no sync shows it) and so
    // does everyone who read m1 there, c included, in their inbox, as for any message of a small group
    assertThat(drain()).extracting(kv -> kv.key + ":" + kv.value.getType() + ":" + kv.value.getRefMessageId())
        .containsExactlyInAnyOrder("a:RECALL:" + m1, "b:RECALL:" + m1, "c:RECALL:" + m1, "#g:RECALL:" + m1);
  }

  @Test
  void aRecallOfAMessageSentBeforeTheModeWasRecordedGoesWhereTheGroupsModeSaysNow() {
    // Given a small group {a, b} and m1, whose sent-store value has no mode (written before it was kept)
    join("a");
    join("b");
    String m1 = send("a");
    forgetMode(m1);
    drain();

    // When a recalls it while the group is small, then every member who got it is told
    messages.pipeInput("g", base("a").setType(MessageType.RECALL).setBody(null).setRefMessageId(m1).build());
    assertThat(drain()).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactlyInAnyOrder("a:RECALL", "b:RECALL");

    // Given the group large (c joins, m3 switches it) and m3 also without a mode
    join("c");
    String m3 = send("c");
    forgetMode(m3);
    drain();

    // When c recalls it, then it goes to the timeline only, as it did before the mode was kept
    messages.pipeInput("g", base("c").setType(MessageType.RECALL).setBody(null).setRefMessageId(m3).build());
    assertThat(drain()).extracting(kv -> kv.key + ":" + kv.value.getType()).containsExactly("#g:RECALL");
  }

  /** Rewrites {@code messageId}'s sent-store value as it was before the diffusion mode was kept. */
  private void forgetMode(String messageId) {
    WindowStore<Bytes, byte[]> sent = driver.getWindowStore(FanoutTopology.SENT_STORE);
    KeyValue<Long, byte[]> stored;
    try (WindowStoreIterator<byte[]> it = sent.fetch(SentCodec.sentKey(messageId), 0L, Long.MAX_VALUE)) {
      stored = it.next();
    }
    SentCodec.Sent s = SentCodec.decodeSent(stored.value);
    assertThat(s.mode()).isIn('W', 'T');
    sent.put(SentCodec.sentKey(messageId), SentCodec.sentValue(new SentCodec.Sent(s.senderId(), s.conversationId(),
        s.clock(), (char) 0, s.seq(), s.sentAt(), s.clientMsgId())), stored.key);
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
        case CONVERSATION_JOINED, CONVERSATION_MODE -> {
          if (openFrom >= 0) {
            readIntervals.add(new long[] {openFrom, e.getTimelineFromSeq()});
            openFrom = -1;
          }
          if (Boolean.TRUE.equals(e.getReadDiffusion())) {
            openFrom = e.getTimelineFromSeq();
          }
        }
        case CONVERSATION_LEFT -> {
          if (openFrom >= 0) {
            readIntervals.add(new long[] {openFrom, e.getTimelineFromSeq()});
            openFrom = -1;
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
    return seen.stream().sorted((x, y) -> Integer.compare(Integer.parseInt(x.substring(1)),
        Integer.parseInt(y.substring(1)))).toList();
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
    ChatMessage m = base(from).build();
    messages.pipeInput("g", m);
    return m.getMessageId();
  }

  private ChatMessage.Builder base(String from) {
    int i = ++n;
    return ChatMessage.newBuilder().setMessageId("m" + i).setClientMsgId("c" + i).setConversationId("g")
        .setConversationType(ConversationType.GROUP).setGroupId("g").setType(MessageType.MESSAGE)
        .setSenderId(from).setBody("body " + i).setSentAt(T0).setAttributes(Map.of());
  }
}
