package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MessageType;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.GenerationControl.Phase;
import dev.impipe.runtime.topics.GenerationControl.Switch;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import dev.impipe.testkit.StreamsTestConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The fan-out's side of an online inbox switch: fence, hold, release to the new generation (ADR 0014). */
class GenerationSwitchTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  private final AtomicReference<Optional<Switch>> control = new AtomicReference<>(Optional.empty());
  private ImTopics topics;
  private TopologyTestDriver driver;
  private TestInputTopic<String, ChatMessage> messages;
  private TestOutputTopic<String, InboxEntry> inbox0;
  private TestOutputTopic<String, InboxEntry> inbox1;
  private TestOutputTopic<String, String> fences;
  private int n;

  @BeforeEach
  void setUp() {
    String registry = "mock://gen-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registry));
    driver = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults().withLargeGroupThreshold(0),
        new FanoutMetrics(new SimpleMeterRegistry()), control::get), StreamsTestConfig.forDriver("fanout"), T0);
    messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ZERO);
    inbox0 = driver.createOutputTopic("im.inbox", topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    inbox1 = driver.createOutputTopic("im.inbox.g1", topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    fences = driver.createOutputTopic("im.inbox-generation", new StringDeserializer(), new StringDeserializer());
  }

  @AfterEach
  void tearDown() {
    driver.close();
  }

  @Test
  void entriesGoToTheConfiguredGenerationWithoutAnExtraHeader() {
    send("alice", "bob", "hi");

    List<TestRecord<String, InboxEntry>> out = inbox0.readRecordsToList();
    assertThat(out).extracting(TestRecord::key).containsExactly("bob", "alice");
    assertThat(out).allSatisfy(r -> assertThat(r.headers().lastHeader(GenerationControl.GENERATION_HEADER)).isNull());
    assertThat(fences.isEmpty()).isTrue();
  }

  @Test
  void aSwitchFencesOnceHoldsInOrderAndReleasesToTheNewGenerationWhenLive() {
    // Given an entry written before the switch
    send("alice", "bob", "before");
    assertThat(inbox0.readKeyValuesToList()).hasSize(2);

    // When a switch to generation 1 is asked for
    control.set(Optional.of(new Switch(1, Phase.FENCE)));
    send("alice", "bob", "held-1");
    send("bob", "alice", "held-2");
    driver.advanceWallClockTime(Duration.ofSeconds(1));

    // Then the task wrote its fence once, and nothing to either generation
    assertThat(fences.readKeyValuesToList()).containsExactly(KeyValue.pair(GenerationControl.fenceKey(1, 0), "0"));
    assertThat(inbox0.isEmpty()).isTrue();
    assertThat(inbox1.isEmpty()).isTrue();

    // When generation 1 goes live (no new message: the tick releases)
    control.set(Optional.of(new Switch(1, Phase.LIVE)));
    driver.advanceWallClockTime(Duration.ofSeconds(1));
    send("alice", "bob", "after");

    // Then the held entries come first, in order (recipient, then sender), to generation 1 only, then the new ones
    List<TestRecord<String, InboxEntry>> out = inbox1.readRecordsToList();
    assertThat(out).extracting(r -> r.key() + ":" + r.value().getBody())
        .containsExactly("bob:held-1", "alice:held-1", "alice:held-2", "bob:held-2", "bob:after", "alice:after");
    assertThat(out).allSatisfy(r -> assertThat(new String(
        r.headers().lastHeader(GenerationControl.GENERATION_HEADER).value(), StandardCharsets.UTF_8)).isEqualTo("1"));
    assertThat(inbox0.isEmpty()).isTrue();
    assertThat(fences.isEmpty()).isTrue();
  }

  @Test
  void aFencedTaskKeepsHoldingWhileItsViewIsBehind() {
    // Given a task that fenced for generation 1
    control.set(Optional.of(new Switch(1, Phase.FENCE)));
    driver.advanceWallClockTime(Duration.ofSeconds(1));
    assertThat(fences.readKeyValuesToList()).hasSize(1);

    // When its view loses the switch (a restarted watch not caught up yet)
    control.set(Optional.empty());
    send("alice", "bob", "held");

    // Then it still writes nothing to generation 0
    assertThat(inbox0.isEmpty()).isTrue();
    control.set(Optional.of(new Switch(1, Phase.LIVE)));
    driver.advanceWallClockTime(Duration.ofSeconds(1));
    assertThat(inbox1.readKeyValuesToList()).extracting(kv -> kv.key).containsExactly("bob", "alice");
  }

  @Test
  void aGenerationHeaderOnAnIncomingMessageDoesNotRedirectItsEntries() {
    ChatMessage m = message("alice", "bob", "sneaky");
    TestRecord<String, ChatMessage> r = new TestRecord<>(m.getConversationId(), m, T0);
    r.headers().add(GenerationControl.GENERATION_HEADER, "7".getBytes(StandardCharsets.UTF_8));
    messages.pipeInput(r);

    assertThat(inbox0.readKeyValuesToList()).hasSize(2);
  }

  private void send(String from, String to, String body) {
    ChatMessage m = message(from, to, body);
    messages.pipeInput(m.getConversationId(), m);
  }

  private ChatMessage message(String from, String to, String body) {
    int i = ++n;
    return ChatMessage.newBuilder().setMessageId("m-" + i).setClientMsgId("c-" + i).setType(MessageType.MESSAGE)
        .setSenderId(from).setBody(body).setSentAt(T0).setAttributes(Map.of())
        .setConversationId(Ids.direct(from, to)).setConversationType(ConversationType.DIRECT).setRecipientId(to)
        .build();
  }
}
