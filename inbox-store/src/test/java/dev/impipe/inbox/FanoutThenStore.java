package dev.impipe.inbox;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.inbox.conversations.ConversationOrders;
import dev.impipe.inbox.conversations.ConversationsConfig;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/**
 * The production fan-out and inbox-store topologies chained on two TopologyTestDriver: whatever the fan-out produces
 * to a topic the inbox store reads is piped on, byte for byte, and {@code im.messages} records are given to the inbox
 * store too if (and only if) it subscribes to that topic. So a test sees what a user of the real pipeline would,
 * whichever topics carry it.
 */
final class FanoutThenStore implements AutoCloseable {

  static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  final ImTopics topics;
  final TopologyTestDriver fanout;
  TopologyTestDriver store;
  private final String registryUrl;
  private final Properties storeProps;
  private final Topology storeTopology;
  /** Every record the inbox store was given, in order: what a restarted store restores from. */
  private final List<Map.Entry<String, TestRecord<byte[], byte[]>>> storeLog = new ArrayList<>();
  private final TestInputTopic<String, ChatMessage> messages;
  private final TestInputTopic<String, MembershipChange> members;
  private final Set<String> storeSources;
  private final Map<String, TestInputTopic<byte[], byte[]>> storeInputs = new HashMap<>();
  private final Map<String, TestOutputTopic<byte[], byte[]>> fanoutOutputs = new HashMap<>();
  private long messageSeq;

  FanoutThenStore(Path stateDir, FanoutConfig fanoutConfig, InboxStoreConfig storeConfig) {
    this(stateDir, fanoutConfig, storeConfig, ConversationOrders.NONE);
  }

  /** With the conversation list's in-memory orders kept in {@code orders}. */
  FanoutThenStore(Path stateDir, FanoutConfig fanoutConfig, InboxStoreConfig storeConfig,
      ConversationOrders orders) {
    registryUrl = "mock://fanout-then-store-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    fanout = new TopologyTestDriver(FanoutTopology.build(topics, fanoutConfig,
        new FanoutMetrics(new SimpleMeterRegistry())), StreamsTestConfig.forDriver("fanout"), T0);
    messages = fanout.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ofMillis(1));
    members = fanout.createInputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), T0, Duration.ofMillis(1));
    storeProps = StreamsTestConfig.forDriver("inbox-store");
    storeProps.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    storeTopology = InboxStoreTopology.build(topics, storeConfig, ConversationsConfig.defaults(), orders);
    storeSources = sources(storeTopology);
    store = new TopologyTestDriver(storeTopology, storeProps, T0);
  }

  /**
   * Closes the inbox store (its tasks close) and starts it again on the same topology, which restores what the old
   * one held by being given every record again (as a new instance restores from the topics).
   */
  void restartStore() {
    store.close();
    storeInputs.clear();
    store = new TopologyTestDriver(storeTopology, storeProps, T0);
    for (Map.Entry<String, TestRecord<byte[], byte[]>> r : storeLog) {
      storeInputUnlogged(r.getKey()).pipeInput(r.getValue());
    }
  }

  /** Publishes a message / read / recall to im.messages; returns its conversation seq. */
  long publish(ChatMessage m) {
    long seq = messageSeq++;
    messages.pipeInput(m.getConversationId(), m);
    if (storeSources.contains(topics.messages().name())) {
      pipe(topics.messages().name(), new TestRecord<>(m.getConversationId().getBytes(
          java.nio.charset.StandardCharsets.UTF_8),
          topics.messages().valueSerde().serializer()
              .serialize(topics.messages().name(), m),
          T0));
    }
    flush();
    return seq;
  }

  void change(String actor, String group, String user, MembershipOp op) {
    members.pipeInput(group, MembershipChange.newBuilder().setGroupId(group).setUserId(user).setOp(op).setAt(T0)
        .setActorId(actor).build());
    flush();
  }

  /** Pipes everything the fan-out produced to the topics the inbox store reads. */
  void flush() {
    for (String topic : fanout.producedTopicNames()) {
      if (!storeSources.contains(topic)) {
        continue;
      }
      TestOutputTopic<byte[], byte[]> out = fanoutOutputs.computeIfAbsent(topic, t -> fanout.createOutputTopic(t,
          new ByteArrayDeserializer(), new ByteArrayDeserializer()));
      for (TestRecord<byte[], byte[]> r : out.readRecordsToList()) {
        pipe(topic, r);
      }
    }
  }

  <V> StoreView<V> storeView(String name) {
    return StoreView.of(store.<org.apache.kafka.common.utils.Bytes, V>getKeyValueStore(name));
  }

  /** Gives the inbox store one record (and logs it for {@link #restartStore()}). */
  void pipe(String topic, TestRecord<byte[], byte[]> r) {
    storeLog.add(Map.entry(topic, r));
    storeInputUnlogged(topic).pipeInput(r);
  }

  private TestInputTopic<byte[], byte[]> storeInputUnlogged(String topic) {
    return storeInputs.computeIfAbsent(topic, t -> store.createInputTopic(t, new ByteArraySerializer(),
        new ByteArraySerializer()));
  }

  private static Set<String> sources(Topology topology) {
    Set<String> topics = new java.util.HashSet<>();
    for (TopologyDescription.Subtopology sub : topology.describe().subtopologies()) {
      for (TopologyDescription.Node node : sub.nodes()) {
        if (node instanceof TopologyDescription.Source source) {
          topics.addAll(source.topicSet());
        }
      }
    }
    return topics;
  }

  static ChatMessage message(String sender, String conversation, String clientMsgId, String body) {
    ChatMessage.Builder b = ChatMessage.newBuilder().setMessageId("m-" + sender + "-" + clientMsgId)
        .setClientMsgId(clientMsgId).setConversationId(conversation).setType(MessageType.MESSAGE)
        .setSenderId(sender).setBody(body).setSentAt(T0).setAttributes(Map.of());
    return conversationOf(b, sender, conversation).build();
  }

  static ChatMessage recall(String sender, String conversation, String clientMsgId, String refMessageId) {
    ChatMessage.Builder b = ChatMessage.newBuilder().setMessageId("m-" + sender + "-" + clientMsgId)
        .setClientMsgId(clientMsgId).setConversationId(conversation).setType(MessageType.RECALL)
        .setSenderId(sender).setRefMessageId(refMessageId).setSentAt(T0).setAttributes(Map.of());
    return conversationOf(b, sender, conversation).build();
  }

  private static ChatMessage.Builder conversationOf(ChatMessage.Builder b, String sender, String conversation) {
    if (Ids.isDirect(conversation)) {
      String[] parties = conversation.substring(2).split(":");
      return b.setConversationType(ConversationType.DIRECT)
          .setRecipientId(parties[0].equals(sender) ? parties[1] : parties[0]);
    }
    return b.setConversationType(ConversationType.GROUP).setGroupId(conversation);
  }

  @Override
  public void close() {
    fanout.close();
    store.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }
}
