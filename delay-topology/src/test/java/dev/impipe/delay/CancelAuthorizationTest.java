package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MessageType;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A schedule cancel is honoured only from the message's original sender (commands built with the ingest helper,
 * {@link ScheduledMessages}); an operator's cancel (no requester) always is. A refused cancel goes to im.rejected
 * with the reason and tells the requester with a REJECTED inbox entry; the message is still delivered.
 */
class CancelAuthorizationTest {

  private static final Instant T0 = Instant.parse("2026-03-01T12:00:00.250Z");

  @TempDir
  Path stateDir;

  private String registryUrl;
  private ImTopics topics;
  private ScheduledMessages helper;
  private SimpleMeterRegistry meters;
  private TopologyTestDriver driver;
  private TestInputTopic<String, ScheduleCommand> delayed;
  private TestOutputTopic<byte[], byte[]> messages;
  private TestOutputTopic<String, InboxEntry> inbox;
  private TestOutputTopic<byte[], byte[]> rejected;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://delay-cancel-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    helper = new ScheduledMessages(topics);
    meters = new SimpleMeterRegistry();
    driver = new TopologyTestDriver(DelayTopology.build(topics, DelayConfig.defaults(),
        Set.of("im.messages", "im.inbox", "im.rejected", "im.delayed")::contains, new DelayMetrics(meters)),
        StreamsTestConfig.forDriver("delay-cancel-test", topics.names(), stateDir), T0);
    delayed = driver.createInputTopic("im.delayed", new StringSerializer(), topics.delayed().valueSerde().serializer());
    messages = driver.createOutputTopic("im.messages", new ByteArrayDeserializer(), new ByteArrayDeserializer());
    inbox = driver.createOutputTopic("im.inbox", new StringDeserializer(), topics.inbox().valueSerde().deserializer());
    rejected = driver.createOutputTopic("im.rejected", new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  @AfterEach
  void tearDown() {
    driver.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void aCancelBySomeoneElseIsRefusedTheRequesterIsToldAndTheMessageStillGoesOut() {
    // Given: now is 12:00:00.250; alice schedules m-1 for 12:00:02.250
    send(helper.schedule(message("m-1", "alice"), T0.plusSeconds(2)));

    // When: mallory asks to cancel it
    ScheduleCommand cancel = helper.cancel("mallory", "m-1", T0);
    send(cancel);

    // Then: the cancel is in im.rejected as it came, with the reason
    TestRecord<byte[], byte[]> dead = rejected.readRecord();
    assertThat(new String(dead.key(), StandardCharsets.UTF_8)).isEqualTo("m-1");
    assertThat(topics.delayed().valueSerde().deserializer().deserialize("im.delayed", dead.value()))
        .isEqualTo(cancel);
    assertThat(header(dead, RejectedHeaders.MESSAGE))
        .isEqualTo("CANCEL of scheduled message m-1 by mallory, but only its sender may cancel it");
    assertThat(header(dead, RejectedHeaders.SOURCE)).isEqualTo("delay");
    assertThat(rejected.isEmpty()).isTrue();
    // And: mallory's inbox has one REJECTED entry about it
    TestRecord<String, InboxEntry> told = inbox.readRecord();
    assertThat(told.key()).isEqualTo("mallory");
    InboxEntry e = told.value();
    assertThat(e.getType()).isEqualTo(InboxEntryType.REJECTED);
    assertThat(e.getUserId()).isEqualTo("mallory");
    assertThat(e.getRejectedOp()).isEqualTo("CANCEL");
    assertThat(e.getReasonCode()).isEqualTo("NOT_SENDER");
    assertThat(e.getMessageId()).isEqualTo("m-1");
    assertThat(e.getConversationId()).isEqualTo("d:alice:bob");
    assertThat(e.getReason()).isEqualTo(header(dead, RejectedHeaders.MESSAGE));
    assertThat(inbox.isEmpty()).isTrue();
    assertThat(meters.get("im.delay.rejected").tags("reason", "not-sender").counter().count()).isEqualTo(1);

    // When: 12:00:03.250, then alice's message is delivered all the same
    driver.advanceWallClockTime(Duration.ofSeconds(3));
    assertThat(topics.messages().valueSerde().deserializer().deserialize("im.messages", messages.readRecord().value())
        .getMessageId()).isEqualTo("m-1");
    assertThat(messages.isEmpty()).isTrue();
  }

  @Test
  void theSendersCancelIsHonoured() {
    send(helper.schedule(message("m-1", "alice"), T0.plusSeconds(2)));

    send(helper.cancel("alice", "m-1", T0));
    driver.advanceWallClockTime(Duration.ofSeconds(3));

    assertThat(messages.isEmpty()).isTrue();
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(inbox.isEmpty()).isTrue();
    assertThat(meters.get("im.delay.cancels").tags("result", "removed").counter().count()).isEqualTo(1);
  }

  @Test
  void anOperatorsCancelWithoutRequesterIsHonoured() {
    send(helper.schedule(message("m-1", "alice"), T0.plusSeconds(2)));

    send(helper.cancel("m-1", T0));
    driver.advanceWallClockTime(Duration.ofSeconds(3));

    assertThat(messages.isEmpty()).isTrue();
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void aForeignCancelOfAnUnknownOrDeliveredIdStaysACountedNoOp() {
    send(helper.cancel("mallory", "m-unknown", T0));

    assertThat(rejected.isEmpty()).isTrue();
    assertThat(inbox.isEmpty()).isTrue();
    assertThat(meters.get("im.delay.cancels").tags("result", "noop").counter().count()).isEqualTo(1);
  }

  @Test
  void theScheduleRecordsItsSenderAndTheCancelItsRequester() {
    ScheduleCommand schedule = helper.schedule(message("m-1", "alice"), T0.plusSeconds(2));
    ScheduleCommand cancel = helper.cancel("bob", "m-1", T0);

    assertThat(StandardCharsets.UTF_8.decode(schedule.getHeaders().get(DelayHeaders.SENDER)).toString())
        .isEqualTo("alice");
    assertThat(StandardCharsets.UTF_8.decode(cancel.getHeaders().get(DelayHeaders.REQUESTER)).toString())
        .isEqualTo("bob");
    assertThat(helper.cancel("m-1", T0).getHeaders()).isEmpty();
  }

  private void send(ScheduleCommand command) {
    var record = helper.record(command);
    delayed.pipeInput(record.key(), record.value(), T0);
  }

  private static ChatMessage message(String id, String sender) {
    return ChatMessage.newBuilder().setMessageId(id).setClientMsgId("c-" + id).setConversationId("d:alice:bob")
        .setConversationType(ConversationType.DIRECT).setType(MessageType.MESSAGE).setSenderId(sender)
        .setRecipientId("bob").setBody("later").setSentAt(T0).setAttributes(Map.of()).build();
  }

  private static String header(TestRecord<byte[], byte[]> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }
}
