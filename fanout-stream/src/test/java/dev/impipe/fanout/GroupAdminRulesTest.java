package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.internal.GroupState;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The group rules the fan-out enforces on membership changes that name their actor (the authenticated caller,
 * set by ingest): the first JOIN creates the group and makes its joiner admin; only the admin adds or removes
 * others; anyone leaves; the earliest remaining member succeeds a leaving admin; nobody joins an existing group by
 * themselves. A refusal reaches the actor's inbox (REJECTED) and im.rejected (reason header, original bytes).
 */
class GroupAdminRulesTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  private String registryUrl;
  private ImTopics topics;
  private TopologyTestDriver driver;
  private TestInputTopic<String, MembershipChange> members;
  private TestInputTopic<String, ChatMessage> messages;
  private TestOutputTopic<String, InboxEntry> inbox;
  private TestOutputTopic<byte[], byte[]> rejected;
  private int ids;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://fanout-admin-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    driver = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults().withLargeGroupThreshold(0),
        new FanoutMetrics(new SimpleMeterRegistry())), StreamsTestConfig.forDriver("fanout"));
    members = driver.createInputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), T0, Duration.ZERO);
    messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ZERO);
    inbox = driver.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    rejected = driver.createOutputTopic(topics.names().rejected(), new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
  }

  @AfterEach
  void tearDown() {
    driver.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void theCreatorIsAdminAndAddsAndRemovesMembers() {
    // Given alice creates g1 by joining it
    change("alice", "g1", "alice", MembershipOp.JOIN);
    // When she adds bob and carol, then removes carol
    change("alice", "g1", "bob", MembershipOp.JOIN);
    change("alice", "g1", "carol", MembershipOp.JOIN);
    change("alice", "g1", "carol", MembershipOp.LEAVE);

    // Then every change happened, nothing was refused
    assertThat(entries()).containsExactly("alice:CONVERSATION_JOINED", "bob:CONVERSATION_JOINED",
        "carol:CONVERSATION_JOINED", "carol:CONVERSATION_LEFT");
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(groupMessageRecipients("alice", "g1")).containsExactlyInAnyOrder("alice", "bob");
  }

  @Test
  void aNonAdminAddingAMemberIsRefusedAndTold() {
    // Given g1 = {alice (admin), bob}
    change("alice", "g1", "alice", MembershipOp.JOIN);
    change("alice", "g1", "bob", MembershipOp.JOIN);
    inbox.readKeyValuesToList();

    // When bob tries to add mallory (request c-add-1)
    MembershipChange add = change("bob", "g1", "mallory", MembershipOp.JOIN, "c-add-1");

    // Then bob's inbox holds one REJECTED entry naming the request, and mallory gets nothing
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).hasSize(1);
    assertThat(out.get(0).key).isEqualTo("bob");
    InboxEntry rej = out.get(0).value;
    assertThat(rej.getType()).isEqualTo(InboxEntryType.REJECTED);
    assertThat(rej.getUserId()).isEqualTo("bob");
    assertThat(rej.getConversationId()).isEqualTo("g1");
    assertThat(rej.getConversationSeq()).isEqualTo(-1L);
    assertThat(rej.getClientMsgId()).isEqualTo("c-add-1");
    assertThat(rej.getRejectedOp()).isEqualTo("JOIN");
    assertThat(rej.getTargetUserId()).isEqualTo("mallory");
    assertThat(rej.getReasonCode()).isEqualTo("NOT_ADMIN");
    assertThat(rej.getReason()).isEqualTo("bob is not the admin of group g1: only the admin adds members (mallory)");
    // And the original record is in im.rejected with the same reason
    TestRecord<byte[], byte[]> dead = rejected.readRecord();
    assertThat(new String(dead.key(), StandardCharsets.UTF_8)).isEqualTo("g1");
    assertThat(topics.groupMembers().valueSerde().deserializer().deserialize(topics.groupMembers().name(),
        dead.value())).isEqualTo(add);
    assertThat(header(dead, "__streams.errors.message")).isEqualTo(rej.getReason());
    assertThat(header(dead, "__streams.errors.topic")).isEqualTo("im.group-members");
    assertThat(rejected.isEmpty()).isTrue();
    // And mallory is not a member: her post is refused
    assertThat(groupMessageRecipients("mallory", "g1")).containsExactly("mallory");
    assertThat(inbox.isEmpty()).isTrue();
  }

  @Test
  void aNonAdminRemovingAnotherMemberIsRefused() {
    change("alice", "g1", "alice", MembershipOp.JOIN);
    change("alice", "g1", "bob", MembershipOp.JOIN);
    change("alice", "g1", "carol", MembershipOp.JOIN);
    inbox.readKeyValuesToList();

    // When bob tries to remove carol
    change("bob", "g1", "carol", MembershipOp.LEAVE);

    // Then only bob hears of it (REJECTED), and carol is still a member
    assertThat(entries()).containsExactly("bob:REJECTED");
    assertThat(header(rejected.readRecord(), "__streams.errors.message"))
        .isEqualTo("bob is not the admin of group g1: only the admin removes other members (carol)");
    assertThat(groupMessageRecipients("alice", "g1")).containsExactlyInAnyOrder("alice", "bob", "carol");
  }

  @Test
  void aGroupFromBeforeAdminsWereRecordedHasItsEarliestMemberAsAdmin() {
    // Given g1 = {alice, bob, carol} joined in that order, its state rewritten as it was stored before admins were
    // recorded (17 bytes, no admin)
    change("alice", "g1", "alice", MembershipOp.JOIN);
    change("alice", "g1", "bob", MembershipOp.JOIN);
    change("alice", "g1", "carol", MembershipOp.JOIN);
    inbox.readKeyValuesToList();
    KeyValueStore<String, byte[]> groups = driver.getKeyValueStore(FanoutTopology.GROUPS_STORE);
    GroupState now = GroupState.decode(groups.get("g1"));
    groups.put("g1", ByteBuffer.allocate(17).putLong(now.members()).put((byte) 0).putLong(now.lastSeq())
        .array());
    assertThat(GroupState.decode(groups.get("g1")).admin()).isNull();

    // When bob tries to remove carol, then alice (the earliest member) does
    change("bob", "g1", "carol", MembershipOp.LEAVE);
    change("alice", "g1", "carol", MembershipOp.LEAVE);

    // Then bob is refused and alice is obeyed, and from then on the admin is stored
    assertThat(entries()).containsExactly("bob:REJECTED", "carol:CONVERSATION_LEFT");
    assertThat(GroupState.decode(groups.get("g1")).admin()).isEqualTo("alice");
  }

  @Test
  void anyoneMayLeave() {
    change("alice", "g1", "alice", MembershipOp.JOIN);
    change("alice", "g1", "bob", MembershipOp.JOIN);
    inbox.readKeyValuesToList();

    // When bob (not admin) leaves by himself
    change("bob", "g1", "bob", MembershipOp.LEAVE);

    assertThat(entries()).containsExactly("bob:CONVERSATION_LEFT");
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void whenTheAdminLeavesTheEarliestRemainingMemberIsAdmin() {
    // Given g1 joined in the order alice (admin), bob, carol, dave
    change("alice", "g1", "alice", MembershipOp.JOIN);
    change("alice", "g1", "bob", MembershipOp.JOIN);
    change("alice", "g1", "carol", MembershipOp.JOIN);
    change("alice", "g1", "dave", MembershipOp.JOIN);
    // and bob left and came back: he is now the latest by join order
    change("bob", "g1", "bob", MembershipOp.LEAVE);
    change("alice", "g1", "bob", MembershipOp.JOIN);
    inbox.readKeyValuesToList();

    // When alice leaves
    change("alice", "g1", "alice", MembershipOp.LEAVE);
    // Then carol (earliest remaining) adds erin and removes dave; bob cannot add anyone
    change("carol", "g1", "erin", MembershipOp.JOIN);
    change("carol", "g1", "dave", MembershipOp.LEAVE);
    change("bob", "g1", "frank", MembershipOp.JOIN);
    // and alice, no longer a member, cannot come back by herself
    change("alice", "g1", "alice", MembershipOp.JOIN);

    assertThat(entries()).containsExactly("alice:CONVERSATION_LEFT", "erin:CONVERSATION_JOINED",
        "dave:CONVERSATION_LEFT", "bob:REJECTED", "alice:REJECTED");
    assertThat(header(rejected.readRecord(), "__streams.errors.message")).startsWith("bob is not the admin");
    assertThat(header(rejected.readRecord(), "__streams.errors.message"))
        .isEqualTo("alice cannot join group g1 by themselves: only its admin adds members");
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void anEmptiedGroupIsCreatedAnewByTheNextJoin() {
    change("alice", "g1", "alice", MembershipOp.JOIN);
    change("alice", "g1", "alice", MembershipOp.LEAVE);
    inbox.readKeyValuesToList();

    // When bob joins the now empty g1, he creates it and is its admin
    change("bob", "g1", "bob", MembershipOp.JOIN);
    change("bob", "g1", "carol", MembershipOp.JOIN);
    change("alice", "g1", "alice", MembershipOp.JOIN);

    assertThat(entries()).containsExactly("bob:CONVERSATION_JOINED", "carol:CONVERSATION_JOINED", "alice:REJECTED");
  }

  @Test
  void nobodyCreatesAGroupByAddingSomeoneElse() {
    change("alice", "g1", "bob", MembershipOp.JOIN);

    assertThat(inbox.readValuesToList()).singleElement().satisfies(e -> {
      assertThat(e.getUserId()).isEqualTo("alice");
      assertThat(e.getType()).isEqualTo(InboxEntryType.REJECTED);
      assertThat(e.getReasonCode()).isEqualTo("NO_GROUP");
    });
    assertThat(rejected.readRecord()).isNotNull();
  }

  @Test
  void repeatedRequestsOfAMemberAreNoOpsNotRefusals() {
    change("alice", "g1", "alice", MembershipOp.JOIN);
    change("alice", "g1", "bob", MembershipOp.JOIN);
    inbox.readKeyValuesToList();

    // A retried self-join of a member, the admin re-adding a member, a self-leave of a non-member
    change("bob", "g1", "bob", MembershipOp.JOIN);
    change("alice", "g1", "bob", MembershipOp.JOIN);
    change("carol", "g1", "carol", MembershipOp.LEAVE);

    assertThat(inbox.isEmpty()).isTrue();
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void anOperatorChangeWithoutActorIsAppliedAsItIs() {
    // Given g1 = {alice (admin)}
    change("alice", "g1", "alice", MembershipOp.JOIN);
    inbox.readKeyValuesToList();

    // When an operator (no actorId, e.g. bin/im produce) adds bob and removes alice
    change(null, "g1", "bob", MembershipOp.JOIN);
    change(null, "g1", "alice", MembershipOp.LEAVE);

    // Then both happen, and bob, the earliest remaining member, is the admin now
    assertThat(entries()).containsExactly("bob:CONVERSATION_JOINED", "alice:CONVERSATION_LEFT");
    change("bob", "g1", "carol", MembershipOp.JOIN);
    assertThat(entries()).containsExactly("carol:CONVERSATION_JOINED");
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void anOperatorCreatedGroupHasItsFirstJoinerAsAdmin() {
    change(null, "g1", "alice", MembershipOp.JOIN);
    change(null, "g1", "bob", MembershipOp.JOIN);
    inbox.readKeyValuesToList();

    change("bob", "g1", "carol", MembershipOp.JOIN);
    change("alice", "g1", "carol", MembershipOp.JOIN);

    assertThat(entries()).containsExactly("bob:REJECTED", "carol:CONVERSATION_JOINED");
  }

  @Test
  void anInvalidMembershipChangeIsDeadLetteredWithItsReasonAndChangesNothing() {
    change("alice", "g1", "alice", MembershipOp.JOIN);
    inbox.readKeyValuesToList();

    // When changes arrive keyed by another group, naming an invalid user or actor, or an unknown operation
    members.pipeInput("g2", MembershipChange.newBuilder().setGroupId("g1").setUserId("bob").setOp(MembershipOp.JOIN)
        .setAt(T0).setActorId("alice").build());
    change("alice", "g1", "bad user", MembershipOp.JOIN);
    change("bad actor", "g1", "bob", MembershipOp.JOIN);
    change("alice", "g1", "bob", MembershipOp.UNKNOWN);

    // Then each is in im.rejected with the reason, and g1 is still {alice}
    List<String> reasons = new ArrayList<>();
    while (!rejected.isEmpty()) {
      reasons.add(header(rejected.readRecord(), "__streams.errors.message"));
    }
    assertThat(reasons).containsExactly(
        "membership change for group g1 is keyed 'g2': it must be keyed by its groupId to be co-partitioned with the"
            + " group's messages",
        "invalid groupId or userId in membership change: g1/bad user",
        "invalid actorId in membership change: bad actor",
        "unknown membership operation UNKNOWN (written by a newer producer?)");
    assertThat(inbox.isEmpty()).isTrue();
    assertThat(groupMessageRecipients("alice", "g1")).containsExactly("alice");
  }

  // --- helpers -------------------------------------------------------------------------------------------------

  private MembershipChange change(String actor, String group, String user, MembershipOp op) {
    return change(actor, group, user, op, null);
  }

  private MembershipChange change(String actor, String group, String user, MembershipOp op, String clientMsgId) {
    MembershipChange change = MembershipChange.newBuilder().setGroupId(group).setUserId(user).setOp(op).setAt(T0)
        .setActorId(actor).setClientMsgId(clientMsgId).build();
    members.pipeInput(group, change);
    return change;
  }

  private List<String> entries() {
    return inbox.readKeyValuesToList().stream().map(kv -> kv.key + ":" + kv.value.getType()).toList();
  }

  /** Who receives a message {@code sender} posts to the group now (a refused sender gets only a REJECTED). */
  private List<String> groupMessageRecipients(String sender, String group) {
    int n = ++ids;
    messages.pipeInput(group, ChatMessage.newBuilder().setMessageId("m-" + n).setClientMsgId("c-" + n)
        .setType(MessageType.MESSAGE).setConversationId(group).setConversationType(ConversationType.GROUP)
        .setGroupId(group).setSenderId(sender).setBody("hi").setSentAt(T0).setAttributes(Map.of()).build());
    rejected.readRecordsToList();
    return inbox.readKeyValuesToList().stream().map(kv -> kv.key).toList();
  }

  private static String header(TestRecord<byte[], byte[]> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }
}
