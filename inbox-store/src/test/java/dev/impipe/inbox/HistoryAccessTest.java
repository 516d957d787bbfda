package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.inbox.query.HistoryAccess;
import dev.impipe.inbox.query.Page;
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
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
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
 * History read access through the real topologies: the fan-out (TopologyTestDriver) writes JOINED / LEFT entries,
 * the inbox store (a second driver, fed the fan-out's im.inbox and history output)
 * builds the membership store, and {@link HistoryAccess} + {@link Timelines#before} answer who reads what.
 */
class HistoryAccessTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  @TempDir
  Path stateDir;

  private String registryUrl;
  private ImTopics topics;
  private TopologyTestDriver fanout;
  private TopologyTestDriver store;
  private TestInputTopic<String, ChatMessage> fanoutMessages;
  private TestInputTopic<String, MembershipChange> fanoutMembers;
  private TestOutputTopic<String, InboxEntry> fanoutInbox;
  private TestOutputTopic<String, ChatMessage> fanoutHistory;
  private TestInputTopic<String, ChatMessage> storeHistory;
  private TestInputTopic<String, InboxEntry> storeInbox;
  private int n;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://history-access-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    fanout = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults().withLargeGroupThreshold(0),
        new FanoutMetrics(new SimpleMeterRegistry())), StreamsTestConfig.forDriver("fanout"), T0);
    fanoutMessages = fanout.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ofMillis(1));
    fanoutMembers = fanout.createInputTopic(topics.groupMembers().name(),
        topics.groupMembers().keySerde().serializer(), topics.groupMembers().valueSerde().serializer(), T0,
        Duration.ofMillis(1));
    fanoutInbox = fanout.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    Properties props = StreamsTestConfig.forDriver("inbox-store");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    store = new TopologyTestDriver(InboxStoreTopology.build(topics, InboxStoreConfig.defaults()), props, T0);
    fanoutHistory = fanout.createOutputTopic(topics.history().name(), topics.history().keySerde().deserializer(),
        topics.history().valueSerde().deserializer());
    storeHistory = store.createInputTopic(topics.history().name(), topics.history().keySerde().serializer(),
        topics.history().valueSerde().serializer());
    storeInbox = store.createInputTopic(topics.inbox().name(), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer());
  }

  @AfterEach
  void tearDown() {
    fanout.close();
    store.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void aNonMemberReadsNothingOfAGroup() {
    change("alice", "g", "alice", MembershipOp.JOIN);
    post("alice", "g");

    assertThat(access("carol", "g")).isEmpty();
    assertThat(access("carol", "never-created")).isEmpty();
  }

  @Test
  void aMemberReadsFromTheirJoinAndALateJoinerNothingBeforeTheirs() {
    // Given alice creates g and posts at conversation seqs 0 and 1
    change("alice", "g", "alice", MembershipOp.JOIN);
    post("alice", "g");
    post("alice", "g");
    // and mallory's refused post (2) and a retried duplicate of alice's (3) are processed before bob joins
    post("mallory", "g");
    duplicateOfLast("alice", "g");
    // When alice adds bob, then bob posts (4)
    change("alice", "g", "bob", MembershipOp.JOIN);
    long bobsFirst = post("bob", "g");

    // Then alice reads from 0, bob from right after everything processed before his join
    assertThat(access("alice", "g")).hasValue(0);
    assertThat(access("bob", "g")).hasValue(4);
    assertThat(seqs(history("bob", "g", OptionalLong.empty(), 10))).containsExactly(bobsFirst);
    // And the history page of the late joiner stops at his join: paging further gives nothing
    Page<ChatMessage> page = history("bob", "g", OptionalLong.empty(), 1);
    assertThat(page.hasMore()).isFalse();
    assertThat(history("bob", "g", OptionalLong.of(page.next()), 10).entries()).isEmpty();
  }

  @Test
  void aLeaverReadsNothingAndARejoinerReadsFromTheNewJoin() {
    change("alice", "g", "alice", MembershipOp.JOIN);
    change("alice", "g", "bob", MembershipOp.JOIN);
    post("alice", "g"); // 0: bob was there
    change("bob", "g", "bob", MembershipOp.LEAVE);

    assertThat(access("bob", "g")).isEmpty();

    post("alice", "g"); // 1: bob was away
    change("alice", "g", "bob", MembershipOp.JOIN);
    long afterRejoin = post("alice", "g"); // 2

    assertThat(access("bob", "g")).hasValue(2);
    assertThat(seqs(history("bob", "g", OptionalLong.empty(), 10))).containsExactly(afterRejoin);
  }

  @Test
  void aRefusedJoinGivesNoAccess() {
    change("alice", "g", "alice", MembershipOp.JOIN);
    post("alice", "g");
    change("mallory", "g", "mallory", MembershipOp.JOIN); // refused: not added by the admin

    assertThat(access("mallory", "g")).isEmpty();
  }

  @Test
  void aDirectChatIsReadByItsTwoPartiesOnly() {
    String chat = Ids.direct("alice", "bob");
    long first = post("alice", chat);
    long second = post("bob", chat);

    assertThat(access("alice", chat)).hasValue(0);
    assertThat(access("bob", chat)).hasValue(0);
    assertThat(seqs(history("bob", chat, OptionalLong.empty(), 10))).containsExactly(second, first);
    assertThat(access("carol", chat)).isEmpty();
    assertThat(access("alice", "d:alice:bob:carol")).isEmpty();
    assertThat(access("alice", "d:bob:alice")).as("not the canonical id").isEmpty();
    assertThat(access("alice", Ids.groupTimeline("g"))).as("a large group's timeline: merged sync only").isEmpty();
  }

  // --- helpers -------------------------------------------------------------------------------------------------

  private OptionalLong access(String user, String conversation) {
    StoreView<byte[]> memberships = StoreView.of(store.getKeyValueStore(InboxStoreTopology.MEMBERSHIPS_STORE));
    return HistoryAccess.from(memberships, user, conversation);
  }

  /** History as {@code user} may read it; the test fails if they may not read at all. */
  private Page<ChatMessage> history(String user, String conversation, OptionalLong before, int limit) {
    StoreView<ChatMessage> timeline = StoreView.of(store.getKeyValueStore(InboxStoreTopology.TIMELINE_STORE));
    return Timelines.before(timeline, conversation, before, limit, access(user, conversation).orElseThrow());
  }

  private static List<Long> seqs(Page<?> page) {
    return page.entries().stream().map(Page.Entry::seq).toList();
  }

  private void change(String actor, String group, String user, MembershipOp op) {
    fanoutMembers.pipeInput(group, MembershipChange.newBuilder().setGroupId(group).setUserId(user).setOp(op)
        .setAt(T0).setActorId(actor).build());
    flush();
  }

  /** Posts to a group or direct chat; returns its conversation seq (the offset in im.messages). */
  private long post(String sender, String conversation) {
    int i = ++n;
    return publish(message(sender, conversation, "m-" + i, "c-" + i));
  }

  private void duplicateOfLast(String sender, String conversation) {
    publish(message(sender, conversation, "m-" + n, "c-" + n));
  }

  private long publish(ChatMessage m) {
    long seq = fanoutMessagesPiped++;
    fanoutMessages.pipeInput(m.getConversationId(), m);
    flush();
    return seq;
  }

  private long fanoutMessagesPiped;

  private ChatMessage message(String sender, String conversation, String id, String clientMsgId) {
    ChatMessage.Builder b = ChatMessage.newBuilder().setMessageId(id).setClientMsgId(clientMsgId)
        .setConversationId(conversation).setType(MessageType.MESSAGE).setSenderId(sender).setBody("body " + id)
        .setSentAt(T0).setAttributes(Map.of());
    if (Ids.isDirect(conversation)) {
      String[] parties = conversation.substring(2).split(":");
      return b.setConversationType(ConversationType.DIRECT)
          .setRecipientId(parties[0].equals(sender) ? parties[1] : parties[0]).build();
    }
    return b.setConversationType(ConversationType.GROUP).setGroupId(conversation).build();
  }

  private void flush() {
    for (TestRecord<String, InboxEntry> r : fanoutInbox.readRecordsToList()) {
      storeInbox.pipeInput(r);
    }
    for (TestRecord<String, ChatMessage> r : fanoutHistory.readRecordsToList()) {
      storeHistory.pipeInput(r);
    }
  }
}
