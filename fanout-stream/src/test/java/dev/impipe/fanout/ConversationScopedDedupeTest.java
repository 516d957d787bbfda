package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MessageType;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.fanout.internal.SentCodec;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Dedupe is per conversation: a clientMsgId reused in another chat is another message, a retry is not. */
class ConversationScopedDedupeTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  private String registryUrl;
  private TopologyTestDriver driver;
  private SimpleMeterRegistry registry;
  private TestInputTopic<String, ChatMessage> messages;
  private TestOutputTopic<String, InboxEntry> inbox;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://dedupe-" + UUID.randomUUID();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    registry = new SimpleMeterRegistry();
    driver = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults(),
        new FanoutMetrics(registry)), StreamsTestConfig.forDriver("fanout"));
    messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ofMillis(1));
    inbox = driver.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
  }

  @AfterEach
  void tearDown() {
    if (driver != null) {
      driver.close();
    }
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void theSameClientMsgIdInTwoChatsDeliversBoth() {
    // When alice uses clientMsgId c-1 in her chat with bob and again in her chat with carol
    send(direct("alice", "bob", "c-1", "hi bob"));
    send(direct("alice", "carol", "c-1", "hi carol"));

    // Then both are delivered, each to its recipient and to alice
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getBody())
        .containsExactly("bob:hi bob", "alice:hi bob", "carol:hi carol", "alice:hi carol");
  }

  @Test
  void aRetryInTheSameChatIsStillDeliveredOnce() {
    send(direct("alice", "bob", "c-1", "hi bob"));
    send(direct("alice", "bob", "c-1", "hi bob"));

    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key).containsExactly("bob", "alice");
  }

  @Test
  void aRetryIsCaughtFromWhatTheStoreHeldBeforeTheProcessorStarted() {
    // Given the dedupe store already holds alice's c-1 to bob (put by an earlier run of the task, restored)
    ChatMessage hi = direct("alice", "bob", "c-1", "hi bob");
    WindowStore<Bytes, byte[]> dedupe = driver.getWindowStore(FanoutTopology.DEDUPE_STORE);
    dedupe.put(SentCodec.dedupeKey("alice", "d:alice:bob", "c-1"), SentCodec.dedupeValue(hi.getMessageId()),
        T0.toEpochMilli());

    // When it is retried, then another message is sent
    send(hi);
    send(direct("alice", "bob", "c-2", "again"));

    // Then the retry is a duplicate (the dedupe filter was built from the store), the other one is delivered
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.value.getBody()).containsExactly("again", "again");
  }

  @Test
  void withoutTheFilterRetriesAreCaughtTheSame() {
    driver.close();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    registry = new SimpleMeterRegistry();
    driver = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults().withDedupeFilterMb(0),
        new FanoutMetrics(registry)), StreamsTestConfig.forDriver("fanout"));
    messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ofMillis(1));
    inbox = driver.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());

    send(direct("alice", "bob", "c-1", "hi bob"));
    send(direct("alice", "bob", "c-1", "hi bob"));

    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key).containsExactly("bob", "alice");
    assertThat(registry.get("im.fanout.dedupe.reads").counter().count()).isEqualTo(2);
    assertThat(registry.get("im.fanout.dedupe.skipped").counter().count()).isZero();
    assertThat(registry.get("im.fanout.dedupe.filter.bytes").gauge().value()).isZero();
  }

  @Test
  void theFilterSkipsTheStoreForNewMessagesAndReadsItForARetry() {
    send(direct("alice", "bob", "c-1", "one"));
    send(direct("alice", "bob", "c-2", "two"));
    send(direct("alice", "bob", "c-1", "one"));

    assertThat(registry.get("im.fanout.dedupe.skipped").counter().count()).isEqualTo(2);
    assertThat(registry.get("im.fanout.dedupe.reads").counter().count()).isEqualTo(1);
    assertThat(registry.get("im.fanout.duplicates").counter().count()).isEqualTo(1);
    assertThat(registry.get("im.fanout.dedupe.filter.bytes").gauge().value()).isPositive();
    // Closing the app releases the filters
    driver.close();
    driver = null;
    assertThat(registry.get("im.fanout.dedupe.filter.bytes").gauge().value()).isZero();
  }

  private void send(ChatMessage m) {
    messages.pipeInput(m.getConversationId(), m);
  }

  private static ChatMessage direct(String from, String to, String clientMsgId, String body) {
    String conversation = Ids.direct(from, to);
    return ChatMessage.newBuilder().setMessageId("m-" + conversation + "-" + clientMsgId)
        .setClientMsgId(clientMsgId).setConversationId(conversation).setConversationType(ConversationType.DIRECT)
        .setType(MessageType.MESSAGE).setSenderId(from).setRecipientId(to).setBody(body).setSentAt(T0)
        .setAttributes(Map.of()).build();
  }
}
