package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.runtime.domain.Ids;
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
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Refused messages and recalls are not silent: besides im.rejected, the sender gets a REJECTED inbox entry with the
 * request's ids and the reason. A recall is honoured only from the original sender; a group post only from a member.
 */
class RecallAuthorizationTest {

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
    registryUrl = "mock://fanout-recall-" + UUID.randomUUID();
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
  void aRecallBySomeoneElseIsRefusedAndTheRecallerIsTold() {
    // Given g1 = {alice, bob} and alice's message (im.messages offset 0)
    join("g1", "alice");
    join("g1", "bob");
    ChatMessage original = send(group("alice", "g1").setBody("secret plan").build());
    inbox.readKeyValuesToList();

    // When bob tries to recall it (offset 1)
    ChatMessage recall = send(recall("bob", "g1", original.getMessageId()));

    // Then the message stays: no RECALL reaches anyone; bob gets one REJECTED entry about his request
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).hasSize(1);
    assertThat(out.get(0).key).isEqualTo("bob");
    InboxEntry rej = out.get(0).value;
    assertThat(rej.getType()).isEqualTo(InboxEntryType.REJECTED);
    assertThat(rej.getRejectedOp()).isEqualTo("RECALL");
    assertThat(rej.getReasonCode()).isEqualTo("NOT_SENDER");
    assertThat(rej.getMessageId()).isEqualTo(recall.getMessageId());
    assertThat(rej.getClientMsgId()).isEqualTo(recall.getClientMsgId());
    assertThat(rej.getRefMessageId()).isEqualTo(original.getMessageId());
    assertThat(rej.getConversationId()).isEqualTo("g1");
    assertThat(rej.getConversationSeq()).isEqualTo(1L);
    assertThat(rej.getBody()).isNull();
    // And im.rejected holds the recall with the same reason
    TestRecord<byte[], byte[]> dead = rejected.readRecord();
    assertThat(topics.messages().valueSerde().deserializer().deserialize(topics.messages().name(), dead.value()))
        .isEqualTo(recall);
    assertThat(header(dead, "__streams.errors.message")).isEqualTo(rej.getReason())
        .contains("only its sender may recall it");
    assertThat(rejected.isEmpty()).isTrue();

    // When alice herself recalls it, then it is recalled for everyone
    send(recall("alice", "g1", original.getMessageId()));
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactlyInAnyOrder("alice:RECALL", "bob:RECALL");
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void aDirectRecallBySomeoneElseIsRefusedToo() {
    ChatMessage original = send(direct("alice", "bob"));
    inbox.readKeyValuesToList();

    ChatMessage forged = ChatMessage.newBuilder(direct("bob", "alice")).setType(MessageType.RECALL).setBody(null)
        .setRefMessageId(original.getMessageId()).build();
    send(forged);

    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactly("bob:REJECTED");
    assertThat(header(rejected.readRecord(), "__streams.errors.message")).contains("only its sender may recall it");
  }

  @Test
  void aRecallOfAnUnknownMessageIsRefusedAndTold() {
    join("g1", "alice");
    inbox.readKeyValuesToList();

    send(recall("alice", "g1", "m-never-sent"));

    assertThat(inbox.readValuesToList()).singleElement().satisfies(e -> {
      assertThat(e.getUserId()).isEqualTo("alice");
      assertThat(e.getType()).isEqualTo(InboxEntryType.REJECTED);
      assertThat(e.getReasonCode()).isEqualTo("UNKNOWN_MESSAGE");
    });
    assertThat(header(rejected.readRecord(), "__streams.errors.message")).contains("unknown message m-never-sent");
  }

  @Test
  void aNonMembersPostIsRefusedAndTheSenderIsTold() {
    // Given g1 = {alice}
    join("g1", "alice");
    inbox.readKeyValuesToList();

    // When mallory posts to g1 (offset 0)
    ChatMessage post = send(group("mallory", "g1").setBody("spam").build());

    // Then alice gets nothing; mallory gets a REJECTED entry naming her request, without the body
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).extracting(kv -> kv.key).containsExactly("mallory");
    InboxEntry rej = out.get(0).value;
    assertThat(rej.getType()).isEqualTo(InboxEntryType.REJECTED);
    assertThat(rej.getRejectedOp()).isEqualTo("MESSAGE");
    assertThat(rej.getReasonCode()).isEqualTo("NOT_MEMBER");
    assertThat(rej.getReason()).isEqualTo("sender mallory is not a member of group g1");
    assertThat(rej.getMessageId()).isEqualTo(post.getMessageId());
    assertThat(rej.getClientMsgId()).isEqualTo(post.getClientMsgId());
    assertThat(rej.getBody()).isNull();
    assertThat(header(rejected.readRecord(), "__streams.errors.message")).isEqualTo(rej.getReason());
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void malformedRecordsGoOnlyToTheRejectedTopic() {
    // A record keyed wrongly is not a request of a known actor: no REJECTED entry, only the dead letter
    messages.pipeInput("elsewhere", direct("alice", "bob"));

    assertThat(inbox.isEmpty()).isTrue();
    assertThat(header(rejected.readRecord(), "__streams.errors.message")).contains("must be keyed");
  }

  // --- helpers -------------------------------------------------------------------------------------------------

  private void join(String group, String user) {
    members.pipeInput(group, MembershipChange.newBuilder().setGroupId(group).setUserId(user)
        .setOp(MembershipOp.JOIN).setAt(T0).build());
  }

  private ChatMessage send(ChatMessage m) {
    messages.pipeInput(m.getConversationId(), m);
    return m;
  }

  private ChatMessage.Builder group(String from, String group) {
    return base(from).setConversationId(group).setConversationType(ConversationType.GROUP).setGroupId(group);
  }

  private ChatMessage direct(String from, String to) {
    return base(from).setConversationId(Ids.direct(from, to)).setConversationType(ConversationType.DIRECT)
        .setRecipientId(to).setBody("hi").build();
  }

  private ChatMessage recall(String from, String group, String messageId) {
    return group(from, group).setType(MessageType.RECALL).setRefMessageId(messageId).build();
  }

  private ChatMessage.Builder base(String from) {
    int n = ++ids;
    return ChatMessage.newBuilder().setMessageId("m-" + n).setClientMsgId("c-" + n).setType(MessageType.MESSAGE)
        .setSenderId(from).setSentAt(T0).setAttributes(Map.of());
  }

  private static String header(TestRecord<byte[], byte[]> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }
}
