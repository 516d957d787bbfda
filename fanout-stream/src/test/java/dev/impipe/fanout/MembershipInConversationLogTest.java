package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.internal.MembershipProcessor;
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
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Membership changes as JOIN / LEAVE control records in the group's own log ({@code im.messages}): they take effect
 * exactly between the messages before and after them in that log, whatever their record timestamps; the group rules
 * still hold; each applied change is also written to {@code im.group-members}, which the fan-out does not apply twice.
 */
class MembershipInConversationLogTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  private String registryUrl;
  private ImTopics topics;
  private TopologyTestDriver driver;
  private TestInputTopic<String, ChatMessage> messages;
  private TestInputTopic<String, MembershipChange> members;
  private TestOutputTopic<String, InboxEntry> inbox;
  private TestOutputTopic<String, MembershipChange> derived;
  private TestOutputTopic<String, ChatMessage> history;
  private TestOutputTopic<byte[], byte[]> rejected;
  private int ids;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://fanout-control-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    driver = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults().withLargeGroupThreshold(0),
        new FanoutMetrics(new SimpleMeterRegistry())), StreamsTestConfig.forDriver("fanout"));
    messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ZERO);
    members = driver.createInputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), T0, Duration.ZERO);
    inbox = driver.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    derived = driver.createOutputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().deserializer(),
        topics.groupMembers().valueSerde().deserializer());
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
  void aMessageAfterAJoinInTheLogIsDeliveredEvenWhenItsClockIsBehind() {
    // Given alice creates g1 and adds bob; the ingest instance that took the adds runs 2 minutes ahead
    control("alice", "g1", "alice", MessageType.JOIN, T0.plusSeconds(120));
    control("alice", "g1", "bob", MessageType.JOIN, T0.plusSeconds(120));
    inbox.readKeyValuesToList();

    // When bob posts through an instance 2 minutes behind (his post is stamped before both joins)
    post("bob", "g1", T0.minusSeconds(120));

    // Then the post is not refused: it reaches both members
    assertThat(entries()).containsExactlyInAnyOrder("alice:MESSAGE", "bob:MESSAGE");
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void aMessageAfterALeaveInTheLogNeverReachesTheLeaverEvenWhenItsClockIsBehind() {
    // Given g1 = {alice, bob}
    control("alice", "g1", "alice", MessageType.JOIN, T0);
    control("alice", "g1", "bob", MessageType.JOIN, T0);
    // When bob leaves (instance ahead) and alice then posts (instance behind: stamped before the leave)
    control("bob", "g1", "bob", MessageType.LEAVE, T0.plusSeconds(120));
    inbox.readKeyValuesToList();
    post("alice", "g1", T0.minusSeconds(120));

    // Then only alice gets her post
    assertThat(entries()).containsExactly("alice:MESSAGE");
  }

  @Test
  void appliedChangesAreWrittenToGroupMembersAndNotAppliedTwice() {
    // Given alice creates g1 and adds bob through control records at seqs 0 and 1
    control("alice", "g1", "alice", MessageType.JOIN, T0);
    control("alice", "g1", "bob", MessageType.JOIN, T0);
    assertThat(entries()).containsExactly("alice:CONVERSATION_JOINED", "bob:CONVERSATION_JOINED");

    // Then im.group-members holds both changes with their actor, marked as derived from their seq
    List<TestRecord<String, MembershipChange>> out = derived.readRecordsToList();
    assertThat(out).extracting(r -> r.key() + ":" + r.value().getUserId() + ":" + r.value().getOp() + ":"
        + r.value().getActorId()).containsExactly("g1:alice:JOIN:alice", "g1:bob:JOIN:alice");
    assertThat(new String(out.get(1).headers().lastHeader(MembershipProcessor.DERIVED_HEADER).value(),
        StandardCharsets.UTF_8)).isEqualTo("1");
    // And history shows nothing at those seqs (tombstones: the seqs count as applied)
    assertThat(history.readKeyValuesToList()).allSatisfy(kv -> assertThat(kv.value).isNull());

    // When the derived records come back through the fan-out's own membership input (it reads that topic)
    out.forEach(r -> members.pipeInput(new TestRecord<>(r.key(), r.value(), r.headers(), T0)));
    control("bob", "g1", "bob", MessageType.LEAVE, T0);

    // Then nothing is applied twice: bob's leave is the only change, and alice alone gets the next post
    assertThat(entries()).containsExactly("bob:CONVERSATION_LEFT");
    post("alice", "g1", T0);
    assertThat(entries()).containsExactly("alice:MESSAGE");
  }

  @Test
  void aRefusedControlRecordTellsTheActorWithItsSeqAndIsDeadLettered() {
    // Given g1 = {alice (admin), bob} at seqs 0, 1
    control("alice", "g1", "alice", MessageType.JOIN, T0);
    control("alice", "g1", "bob", MessageType.JOIN, T0);
    inbox.readKeyValuesToList();
    derived.readRecordsToList();

    // When bob tries to add mallory (seq 2)
    ChatMessage add = control("bob", "g1", "mallory", MessageType.JOIN, T0);

    // Then bob is told why, at the request's seq, and the record is in im.rejected; nothing is derived
    List<InboxEntry> out = inbox.readValuesToList();
    assertThat(out).singleElement().satisfies(e -> {
      assertThat(e.getUserId()).isEqualTo("bob");
      assertThat(e.getType()).isEqualTo(InboxEntryType.REJECTED);
      assertThat(e.getReasonCode()).isEqualTo("NOT_ADMIN");
      assertThat(e.getConversationSeq()).isEqualTo(2L);
      assertThat(e.getRejectedOp()).isEqualTo("JOIN");
      assertThat(e.getTargetUserId()).isEqualTo("mallory");
      assertThat(e.getClientMsgId()).isEqualTo(add.getClientMsgId());
    });
    TestRecord<byte[], byte[]> dead = rejected.readRecord();
    assertThat(topics.messages().valueSerde().deserializer().deserialize(topics.messages().name(), dead.value()))
        .isEqualTo(add);
    assertThat(derived.isEmpty()).isTrue();
  }

  @Test
  void aControlRecordWithoutMemberOrOfADirectChatIsRejectedWithAReason() {
    ChatMessage noMember = ChatMessage.newBuilder(control("alice", "g1", "alice", MessageType.JOIN, T0))
        .setMemberId(null).setClientMsgId("c-x").build();
    inbox.readKeyValuesToList();
    messages.pipeInput("g1", noMember);

    assertThat(new String(rejected.readRecord().headers().lastHeader("__streams.errors.message").value(),
        StandardCharsets.UTF_8)).isEqualTo("JOIN needs a valid memberId, got 'null'");
    assertThat(inbox.isEmpty()).isTrue();
  }

  // --- helpers -------------------------------------------------------------------------------------------------

  private ChatMessage control(String actor, String group, String member, MessageType op, Instant stampedAt) {
    int n = ++ids;
    ChatMessage m = ChatMessage.newBuilder().setMessageId("ctl-" + n).setClientMsgId("c-" + n).setType(op)
        .setConversationId(group).setConversationType(ConversationType.GROUP).setGroupId(group).setSenderId(actor)
        .setMemberId(member).setSentAt(stampedAt).setAttributes(Map.of()).build();
    messages.pipeInput(group, m, stampedAt);
    return m;
  }

  private void post(String sender, String group, Instant stampedAt) {
    int n = ++ids;
    messages.pipeInput(group, ChatMessage.newBuilder().setMessageId("m-" + n).setClientMsgId("c-" + n)
        .setType(MessageType.MESSAGE).setConversationId(group).setConversationType(ConversationType.GROUP)
        .setGroupId(group).setSenderId(sender).setBody("hi").setSentAt(stampedAt).setAttributes(Map.of()).build(),
        stampedAt);
  }

  private List<String> entries() {
    return inbox.readKeyValuesToList().stream().map(kv -> kv.key + ":" + kv.value.getType()).toList();
  }
}
