package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.runtime.domain.HistoryKey;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Bounds one ordinary account cannot get past in a group (DESIGN "Abuse and quotas"): a group has at most
 * {@code IM_GROUP_MAX_MEMBERS} members (here 3), and a read marker is an action in the group like any other, refused
 * from a non-member. A refusal reaches the actor's inbox (REJECTED) and im.rejected; nothing reaches history.
 */
class GroupAbuseBoundsTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  private String registryUrl;
  private ImTopics topics;
  private TopologyTestDriver driver;
  private TestInputTopic<String, MembershipChange> members;
  private TestInputTopic<String, ChatMessage> messages;
  private TestOutputTopic<String, InboxEntry> inbox;
  private TestOutputTopic<String, ChatMessage> history;
  private TestOutputTopic<byte[], byte[]> rejected;
  private int ids;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://fanout-bounds-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    driver = new TopologyTestDriver(FanoutTopology.build(topics,
        FanoutConfig.defaults().withLargeGroupThreshold(0).withGroupMaxMembers(3),
        new FanoutMetrics(new SimpleMeterRegistry())), StreamsTestConfig.forDriver("fanout"));
    members = driver.createInputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), T0, Duration.ZERO);
    messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ZERO);
    inbox = driver.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    history = driver.createOutputTopic(topics.history().name(), new StringDeserializer(),
        topics.history().valueSerde().deserializer());
    rejected = driver.createOutputTopic(topics.names().rejected(), new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
  }

  @AfterEach
  void tearDown() {
    driver.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void aJoinBeyondTheCapIsRefusedAndTheAdminIsTold() {
    // Given g1 = {alice (admin), bob, carol}: full at a cap of 3
    change("alice", "g1", "alice", MembershipOp.JOIN, null);
    change("alice", "g1", "bob", MembershipOp.JOIN, null);
    change("alice", "g1", "carol", MembershipOp.JOIN, null);
    inbox.readKeyValuesToList();

    // When alice adds dave (request c-add-dave)
    MembershipChange add = change("alice", "g1", "dave", MembershipOp.JOIN, "c-add-dave");

    // Then alice's inbox holds one REJECTED entry with the reason, and dave gets nothing
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).hasSize(1);
    assertThat(out.get(0).key).isEqualTo("alice");
    InboxEntry rej = out.get(0).value;
    assertThat(rej.getType()).isEqualTo(InboxEntryType.REJECTED);
    assertThat(rej.getReasonCode()).isEqualTo("GROUP_FULL");
    assertThat(rej.getClientMsgId()).isEqualTo("c-add-dave");
    assertThat(rej.getTargetUserId()).isEqualTo("dave");
    assertThat(rej.getReason()).isEqualTo(
        "group g1 has 3 members, the most a group may have (IM_GROUP_MAX_MEMBERS): dave cannot join");
    // And the request is in im.rejected with the reason and its code
    TestRecord<byte[], byte[]> dead = rejected.readRecord();
    assertThat(topics.groupMembers().valueSerde().deserializer().deserialize(topics.groupMembers().name(),
        dead.value())).isEqualTo(add);
    assertThat(header(dead, "__streams.errors.message")).isEqualTo(rej.getReason());
    assertThat(header(dead, "im.reject.code")).isEqualTo("GROUP_FULL");
    assertThat(rejected.isEmpty()).isTrue();
    // And dave is not a member: the group's messages reach the three members only
    assertThat(groupMessageRecipients("alice", "g1")).containsExactlyInAnyOrder("alice", "bob", "carol");
  }

  @Test
  void theCapCountsMembersNowAndHoldsForChangesWithoutAnActorToo() {
    // Given a full g1 {alice, bob, carol}
    change("alice", "g1", "alice", MembershipOp.JOIN, null);
    change("alice", "g1", "bob", MembershipOp.JOIN, null);
    change("alice", "g1", "carol", MembershipOp.JOIN, null);
    // When a member already in it is added again, nothing is refused (it changes nothing)
    change("alice", "g1", "bob", MembershipOp.JOIN, null);
    assertThat(rejected.isEmpty()).isTrue();
    // When an operator's change without an actor would add a fourth: refused, im.rejected only (nobody to tell)
    change(null, "g1", "dave", MembershipOp.JOIN, null);
    assertThat(header(rejected.readRecord(), "im.reject.code")).isEqualTo("GROUP_FULL");
    // When carol leaves, there is room again: dave is added
    change("carol", "g1", "carol", MembershipOp.LEAVE, null);
    change("alice", "g1", "dave", MembershipOp.JOIN, null);
    assertThat(rejected.isEmpty()).isTrue();
    inbox.readKeyValuesToList();
    assertThat(groupMessageRecipients("alice", "g1")).containsExactlyInAnyOrder("alice", "bob", "dave");
  }

  @Test
  void aReadMarkerFromANonMemberIsRefusedAndNeverReachesHistory() {
    // Given g1 = {alice, bob} and a message in it
    change("alice", "g1", "alice", MembershipOp.JOIN, null);
    change("alice", "g1", "bob", MembershipOp.JOIN, null);
    groupMessageRecipients("alice", "g1");
    history.readRecordsToList();

    // When mallory, not a member, marks g1 read
    ChatMessage read = ChatMessage.newBuilder().setMessageId("r-1").setClientMsgId("c-read-1")
        .setType(MessageType.READ).setConversationId("g1").setConversationType(ConversationType.GROUP)
        .setGroupId("g1").setSenderId("mallory").setReadUpToSeq(0L).setSentAt(T0).setAttributes(Map.of()).build();
    messages.pipeInput("g1", read);

    // Then mallory alone is told it was refused, and no member's inbox holds her marker
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).extracting(kv -> kv.key + ":" + kv.value.getType() + ":" + kv.value.getReasonCode())
        .containsExactly("mallory:REJECTED:NOT_MEMBER");
    assertThat(out.get(0).value.getRejectedOp()).isEqualTo("READ");
    assertThat(out.get(0).value.getClientMsgId()).isEqualTo("c-read-1");
    // And im.rejected holds it with the reason
    TestRecord<byte[], byte[]> dead = rejected.readRecord();
    assertThat(header(dead, "im.reject.code")).isEqualTo("NOT_MEMBER");
    assertThat(header(dead, "__streams.errors.message")).isEqualTo("reader mallory is not a member of group g1");
    // And history learns only that the log got this far: a tombstone at the READ's seq, nothing to show
    List<TestRecord<String, ChatMessage>> h = history.readRecordsToList();
    assertThat(h).singleElement().satisfies(r -> {
      assertThat(HistoryKey.conversation(r.key())).isEqualTo("g1");
      assertThat(r.value()).isNull();
    });

    // And a member's own read marker still reaches their inbox
    messages.pipeInput("g1", ChatMessage.newBuilder(read).setMessageId("r-2").setClientMsgId("c-read-2")
        .setSenderId("bob").build());
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactly("bob:READ");
    assertThat(rejected.isEmpty()).isTrue();
  }

  // --- helpers -------------------------------------------------------------------------------------------------

  private MembershipChange change(String actor, String group, String user, MembershipOp op, String clientMsgId) {
    MembershipChange change = MembershipChange.newBuilder().setGroupId(group).setUserId(user).setOp(op).setAt(T0)
        .setActorId(actor).setClientMsgId(clientMsgId).build();
    members.pipeInput(group, change);
    return change;
  }

  /** Who receives a message {@code sender} posts to the group now. */
  private List<String> groupMessageRecipients(String sender, String group) {
    int n = ++ids;
    messages.pipeInput(group, ChatMessage.newBuilder().setMessageId("m-" + n).setClientMsgId("c-" + n)
        .setType(MessageType.MESSAGE).setConversationId(group).setConversationType(ConversationType.GROUP)
        .setGroupId(group).setSenderId(sender).setBody("hi").setSentAt(T0).setAttributes(Map.of()).build());
    return inbox.readKeyValuesToList().stream().map(kv -> kv.key).toList();
  }

  private static String header(TestRecord<byte[], byte[]> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }
}
