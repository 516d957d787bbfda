package dev.impipe.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MessageType;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.delay.DelayHeaders;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
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

/**
 * The publisher calls that carry who is asking, so the topologies that own the state can apply the rules: the
 * membership change names its actor, the cancel its requester. The old calls are operator requests (no actor).
 */
class MessagePublisherActorTest {

  private static final Instant NOW = Instant.parse("2026-11-22T10:00:00Z");

  private String registryUrl;
  private ImTopics topics;
  private MockProducer<String, byte[]> producer;
  private MessagePublisher publisher;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://ingest-actor-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    producer = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
    publisher = new MessagePublisher(topics, IngestConfig.defaults(), Clock.fixed(NOW, ZoneOffset.UTC), producer);
  }

  @AfterEach
  void tearDown() {
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void aUsersJoinAndLeaveAreControlRecordsInTheGroupsLogCarryingTheActorAndTheRequestId() throws Exception {
    publisher.join("alice", "g1", "bob", "c-7").get();
    publisher.leave("bob", "g1", "bob").get();

    // In im.messages, keyed by the group like its messages: one log orders membership and messages
    assertThat(producer.history()).extracting(ProducerRecord::topic).containsExactly("im.messages", "im.messages");
    assertThat(producer.history()).extracting(ProducerRecord::key).containsExactly("g1", "g1");
    assertThat(producer.history()).extracting(ProducerRecord::timestamp)
        .containsExactly(NOW.toEpochMilli(), NOW.toEpochMilli());
    ChatMessage join = control(0);
    assertThat(join.getType()).isEqualTo(MessageType.JOIN);
    assertThat(join.getMemberId()).isEqualTo("bob");
    assertThat(join.getSenderId()).isEqualTo("alice");
    assertThat(join.getConversationType()).isEqualTo(ConversationType.GROUP);
    assertThat(join.getConversationId()).isEqualTo("g1");
    assertThat(join.getGroupId()).isEqualTo("g1");
    assertThat(join.getClientMsgId()).isEqualTo("c-7");
    assertThat(join.getMessageId()).isEqualTo(MessagePublisher.messageId("alice", "g1", "c-7"));
    assertThat(join.getSentAt()).isEqualTo(NOW);
    ChatMessage leave = control(1);
    assertThat(leave.getType()).isEqualTo(MessageType.LEAVE);
    assertThat(leave.getSenderId()).isEqualTo("bob");
    assertThat(leave.getMemberId()).isEqualTo("bob");
    assertThat(leave.getClientMsgId()).isNotBlank();
  }

  @Test
  void theOldCallsAreOperatorRequestsWithoutActor() throws Exception {
    publisher.join("g1", "alice").get();
    publisher.leave("g1", "alice").get();
    publisher.cancelScheduled("m1").get();

    assertThat(membership(0).getActorId()).isNull();
    assertThat(membership(1).getActorId()).isNull();
    assertThat(schedule(2).getHeaders()).doesNotContainKey(DelayHeaders.REQUESTER);
  }

  @Test
  void aCancelCarriesItsRequester() throws Exception {
    publisher.cancelScheduled("alice", "m123").get();

    ProducerRecord<String, byte[]> record = producer.history().get(0);
    assertThat(record.key()).isEqualTo("m123");
    ScheduleCommand cancel = schedule(0);
    assertThat(cancel.getOp()).isEqualTo(ScheduleOp.CANCEL);
    assertThat(cancel.getId()).isEqualTo("m123");
    assertThat(StandardCharsets.UTF_8.decode(cancel.getHeaders().get(DelayHeaders.REQUESTER)).toString())
        .isEqualTo("alice");
  }

  @Test
  void aScheduledMessageRecordsItsSenderForLaterCancels() throws Exception {
    publisher.send(new SendRequest("alice", null, "bob", null, "later", "c-1", NOW.plusSeconds(60))).get();

    assertThat(StandardCharsets.UTF_8.decode(schedule(0).getHeaders().get(DelayHeaders.SENDER)).toString())
        .isEqualTo("alice");
  }

  @Test
  void invalidActorsAreRefusedAndPublishNothing() {
    assertThatThrownBy(() -> publisher.join("bad actor", "g1", "bob")).isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("actor");
    assertThatThrownBy(() -> publisher.cancelScheduled("bad requester", "m1"))
        .isInstanceOf(InvalidRequestException.class).hasMessageContaining("requester");
    assertThat(producer.history()).isEmpty();
  }

  private ChatMessage control(int i) {
    return topics.messages().valueSerde().deserializer().deserialize("im.messages", producer.history().get(i).value());
  }

  private MembershipChange membership(int i) {
    return topics.groupMembers().valueSerde().deserializer().deserialize("im.group-members",
        producer.history().get(i).value());
  }

  private ScheduleCommand schedule(int i) {
    return topics.delayed().valueSerde().deserializer().deserialize("im.delayed", producer.history().get(i).value());
  }
}
