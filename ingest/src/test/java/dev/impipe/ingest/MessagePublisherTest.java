package dev.impipe.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class MessagePublisherTest {

  static final Instant NOW = Instant.parse("2026-11-22T10:00:00Z");

  private String registryUrl;
  private ImTopics topics;
  private MockProducer<String, byte[]> producer;
  private MessagePublisher publisher;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://ingest-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    producer = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
    publisher = new MessagePublisher(topics, IngestConfig.defaults(), Clock.fixed(NOW, ZoneOffset.UTC), producer);
  }

  @AfterEach
  void tearDown() {
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void directMessageIsPublishedOnceUnderTheCanonicalConversationId() throws Exception {
    Accepted accepted = publisher.send(SendRequest.direct("bob", "alice", "hi", "c1").fromDevice("phone")).get();

    assertThat(accepted.conversationId()).isEqualTo("d:alice:bob");
    assertThat(accepted.scheduled()).isFalse();
    assertThat(producer.history()).hasSize(1);
    ProducerRecord<String, byte[]> record = producer.history().get(0);
    assertThat(record.topic()).isEqualTo("im.messages");
    assertThat(record.key()).isEqualTo("d:alice:bob");
    ChatMessage m = message(record);
    assertThat(m.getMessageId()).isEqualTo(accepted.messageId());
    assertThat(m.getConversationType()).isEqualTo(ConversationType.DIRECT);
    assertThat(m.getType()).isEqualTo(MessageType.MESSAGE);
    assertThat(m.getSenderId()).isEqualTo("bob");
    assertThat(m.getSenderDeviceId()).isEqualTo("phone");
    assertThat(m.getRecipientId()).isEqualTo("alice");
    assertThat(m.getBody()).isEqualTo("hi");
    assertThat(m.getSentAt()).isEqualTo(NOW);
  }

  @Test
  void retryWithTheSameClientMsgIdGetsTheSameMessageId() throws Exception {
    String first = publisher.send(SendRequest.direct("bob", "alice", "hi", "c1")).get().messageId();
    String retry = publisher.send(SendRequest.direct("bob", "alice", "hi", "c1")).get().messageId();
    String other = publisher.send(SendRequest.direct("carol", "alice", "hi", "c1")).get().messageId();
    assertThat(retry).isEqualTo(first);
    assertThat(other).isNotEqualTo(first);
  }

  @Test
  void groupMessageIsKeyedByTheGroupId() throws Exception {
    Accepted accepted = publisher.send(SendRequest.group("bob", "team-1", "hi all", "c1")).get();
    assertThat(accepted.conversationId()).isEqualTo("team-1");
    ChatMessage m = message(producer.history().get(0));
    assertThat(producer.history().get(0).key()).isEqualTo("team-1");
    assertThat(m.getGroupId()).isEqualTo("team-1");
    assertThat(m.getConversationType()).isEqualTo(ConversationType.GROUP);
  }

  @Test
  void scheduledMessageGoesToTheDelayTopicCarryingTheSerializedMessage() throws Exception {
    Instant later = NOW.plus(Duration.ofHours(1));
    Accepted accepted = publisher.send(SendRequest.direct("bob", "alice", "later", "c9").at(later)).get();

    assertThat(accepted.scheduled()).isTrue();
    ProducerRecord<String, byte[]> record = producer.history().get(0);
    assertThat(record.topic()).isEqualTo("im.delayed");
    assertThat(record.key()).isEqualTo(accepted.messageId());
    ScheduleCommand command = topics.delayed().valueSerde().deserializer().deserialize("im.delayed", record.value());
    assertThat(command.getOp()).isEqualTo(ScheduleOp.SCHEDULE);
    assertThat(command.getId()).isEqualTo(accepted.messageId());
    assertThat(command.getDeliverAt()).isEqualTo(later);
    assertThat(command.getTargetTopic()).isEqualTo("im.messages");
    assertThat(StandardCharsets.UTF_8.decode(command.getKey()).toString()).isEqualTo("d:alice:bob");
    byte[] value = new byte[command.getValue().remaining()];
    command.getValue().get(value);
    ChatMessage m = topics.messages().valueSerde().deserializer().deserialize("im.messages", value);
    assertThat(m.getBody()).isEqualTo("later");
    assertThat(m.getSentAt()).isEqualTo(later);
  }

  @Test
  void cancelPublishesACancelForTheMessageId() throws Exception {
    publisher.cancelScheduled("m123").get();
    ProducerRecord<String, byte[]> record = producer.history().get(0);
    assertThat(record.key()).isEqualTo("m123");
    ScheduleCommand command = topics.delayed().valueSerde().deserializer().deserialize("im.delayed", record.value());
    assertThat(command.getOp()).isEqualTo(ScheduleOp.CANCEL);
    assertThat(command.getId()).isEqualTo("m123");
  }

  @Test
  void joinAndLeaveArePublishedKeyedByGroup() throws Exception {
    publisher.join("g1", "alice").get();
    publisher.leave("g1", "alice").get();
    assertThat(producer.history()).extracting(ProducerRecord::key).containsExactly("g1", "g1");
    MembershipChange leave = topics.groupMembers().valueSerde().deserializer()
        .deserialize("im.group-members", producer.history().get(1).value());
    assertThat(leave.getOp()).isEqualTo(MembershipOp.LEAVE);
    assertThat(leave.getUserId()).isEqualTo("alice");
  }

  @Test
  void readMarkerAndRecallArePublishedAsMessagesOfTheirType() throws Exception {
    publisher.markRead("alice", "tablet", "bob", null, 41).get();
    publisher.recall("alice", null, null, "g1", "m-orig").get();
    ChatMessage read = message(producer.history().get(0));
    assertThat(read.getType()).isEqualTo(MessageType.READ);
    assertThat(read.getReadUpToSeq()).isEqualTo(41L);
    assertThat(read.getConversationId()).isEqualTo("d:alice:bob");
    ChatMessage recall = message(producer.history().get(1));
    assertThat(recall.getType()).isEqualTo(MessageType.RECALL);
    assertThat(recall.getRefMessageId()).isEqualTo("m-orig");
    assertThat(recall.getConversationId()).isEqualTo("g1");
  }

  @Test
  void invalidRequestsAreRefusedWithAReasonAndPublishNothing() {
    assertInvalid(new SendRequest("bob", null, "alice", "g1", "x", "c1", null), "exactly one of 'to' and 'groupId'");
    assertInvalid(new SendRequest("bob", null, null, null, "x", "c1", null), "exactly one of 'to' and 'groupId'");
    assertInvalid(SendRequest.direct(null, "alice", "x", "c1"), "senderId is required");
    assertInvalid(SendRequest.direct("bob:1", "alice", "x", "c1"), "senderId 'bob:1' is not a valid id");
    assertInvalid(SendRequest.direct("bob", "alice", "x", null), "clientMsgId is required");
    assertInvalid(SendRequest.direct("bob", "alice", "", "c1"), "body is required");
    assertInvalid(SendRequest.direct("bob", "alice", "x".repeat(10_001), "c1"), "at most 10000");
    assertInvalid(SendRequest.direct("bob", "alice", "x", "c1").at(NOW.minusSeconds(1)), "not in the future");
    assertInvalid(SendRequest.direct("bob", "alice", "x", "c1").at(NOW.plus(Duration.ofDays(800))),
        "maximum delay");
    assertThatThrownBy(() -> publisher.join("g1", "")).hasMessageContaining("userId is required");
    assertThat(producer.history()).isEmpty();
  }

  private void assertInvalid(SendRequest request, String reason) {
    assertThatThrownBy(() -> publisher.send(request)).isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining(reason);
  }

  private ChatMessage message(ProducerRecord<String, byte[]> record) {
    return topics.messages().valueSerde().deserializer().deserialize(record.topic(), record.value());
  }
}
