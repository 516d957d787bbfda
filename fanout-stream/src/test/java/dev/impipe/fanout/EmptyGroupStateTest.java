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
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A group whose last member left keeps no state in {@code fanout-groups} (issue 12, "state that grows without
 * bound"), and removing it is safe: a group created again under the same id starts its members' history after
 * everything the old group had (conversation seqs are offsets of im.messages and never restart; the join boundary
 * must not either).
 */
class EmptyGroupStateTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  private String registryUrl;
  private TopologyTestDriver driver;
  private TestInputTopic<String, MembershipChange> members;
  private TestInputTopic<String, ChatMessage> messages;
  private TestOutputTopic<String, InboxEntry> inbox;
  private KeyValueStore<String, byte[]> groups;
  private int ids;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://fanout-empty-" + UUID.randomUUID();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    driver = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults(),
        new FanoutMetrics(new SimpleMeterRegistry())), StreamsTestConfig.forDriver("fanout"));
    members = driver.createInputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), T0, Duration.ZERO);
    messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ZERO);
    inbox = driver.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    groups = driver.getKeyValueStore(FanoutTopology.GROUPS_STORE);
  }

  @AfterEach
  void tearDown() {
    driver.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void theLastLeaveRemovesTheGroupsState() {
    change("g1", "alice", MembershipOp.JOIN);
    change("g1", "bob", MembershipOp.JOIN);
    post("g1", "alice");
    change("g1", "alice", MembershipOp.LEAVE);
    assertThat(groups.get("g1")).as("one member left").isNotNull();

    change("g1", "bob", MembershipOp.LEAVE);

    assertThat(groups.get("g1")).as("nobody left").isNull();
  }

  @Test
  void theLastLeaveThroughTheConversationLogRemovesTheGroupsState() {
    control("g1", "alice", MessageType.JOIN);
    post("g1", "alice");
    control("g1", "alice", MessageType.LEAVE);

    assertThat(groups.get("g1")).isNull();
  }

  @Test
  void aGroupCreatedAgainReadsNothingOfTheGroupThatWasRemoved() {
    change("g1", "alice", MembershipOp.JOIN);
    post("g1", "alice"); // seq 0
    post("g1", "alice"); // seq 1
    post("g1", "alice"); // seq 2
    change("g1", "alice", MembershipOp.LEAVE);
    inbox.readKeyValuesToList();

    // The legacy input carries no seq: the boundary comes from the task's state only
    change("g1", "mallory", MembershipOp.JOIN);

    assertThat(joinedFrom("mallory")).as("after seq 2, the old group's last message").isEqualTo(3);
  }

  @Test
  void aRemovedGroupsSeqNeverLowersTheBoundaryOfLaterRecords() {
    change("g1", "alice", MembershipOp.JOIN);
    post("g1", "alice"); // seq 0
    post("g2", "carol"); // seq 1: carol is no member of g2, refused (processed, not fanned out)
    change("g1", "alice", MembershipOp.LEAVE);
    inbox.readKeyValuesToList();

    change("g1", "bob", MembershipOp.JOIN);

    assertThat(joinedFrom("bob")).as("after seq 1, the refused record").isEqualTo(2);
  }

  // --- helpers -------------------------------------------------------------------------------------------------

  private void change(String group, String user, MembershipOp op) {
    members.pipeInput(group, MembershipChange.newBuilder().setGroupId(group).setUserId(user).setOp(op).setAt(T0)
        .setActorId(null).build());
  }

  private void control(String group, String user, MessageType op) {
    int n = ++ids;
    messages.pipeInput(group, ChatMessage.newBuilder().setMessageId("m-" + n).setClientMsgId("c-" + n).setType(op)
        .setConversationId(group).setConversationType(ConversationType.GROUP).setGroupId(group).setSenderId(user)
        .setMemberId(user).setSentAt(T0).setAttributes(Map.of()).build());
  }

  private void post(String group, String sender) {
    int n = ++ids;
    messages.pipeInput(group, ChatMessage.newBuilder().setMessageId("m-" + n).setClientMsgId("c-" + n)
        .setType(MessageType.MESSAGE).setConversationId(group).setConversationType(ConversationType.GROUP)
        .setGroupId(group).setSenderId(sender).setBody("hi").setSentAt(T0).setAttributes(Map.of()).build());
  }

  private long joinedFrom(String user) {
    List<KeyValue<String, InboxEntry>> entries = inbox.readKeyValuesToList();
    return entries.stream().filter(kv -> kv.key.equals(user)
        && kv.value.getType() == InboxEntryType.CONVERSATION_JOINED).findFirst().orElseThrow().value
        .getTimelineFromSeq();
  }
}
