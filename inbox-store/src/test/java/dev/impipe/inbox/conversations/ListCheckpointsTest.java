package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.streams.WriteBackStore;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import dev.impipe.testkit.StreamsTestConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the conversation list writes its changed states to its stores: at the first commit after the task started,
 * then once per checkpoint interval (or when too many states wait), each time with the checkpoint of the last
 * entry they hold. The test driver commits after every record, so "below" shows what a commit wrote. (The replay
 * of the entries after a checkpoint needs the broker: {@code ConversationListCrashIT}.)
 */
class ListCheckpointsTest {

  private static final String REGISTRY = "mock://list-checkpoints-test";
  private static final Instant T = Instant.parse("2026-11-28T10:00:00Z");

  @TempDir
  Path stateDir;

  private ImTopics topics;
  private TopologyTestDriver driver;
  private TestInputTopic<String, InboxEntry> inbox;

  private void start(Map<String, String> env) {
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(REGISTRY));
    Topology topology = new Topology();
    topology.addSource("inbox", topics.inbox().keySerde().deserializer(), topics.inbox().valueSerde().deserializer(),
        topics.inbox().name());
    ConversationTopology.addTo(topology, "inbox", topics.inbox(), ConversationsConfig.fromEnv(env),
        ConversationOrders.NONE);
    driver = new TopologyTestDriver(topology, StreamsTestConfig.forDriver("checkpoints", topics.names(), stateDir), T);
    inbox = driver.createInputTopic(topics.inbox().name(), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer());
  }

  @AfterEach
  void tearDown() {
    if (driver != null) {
      driver.close();
    }
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  @Test
  void changesReachTheStoreOnceAnIntervalWithTheCheckpointOfTheLastEntryTheyHold() {
    start(Map.of("IM_CONVERSATION_CHECKPOINT_INTERVAL", "30s"));
    // The first entry after the start is written at once (a task's states without a checkpoint are those of its
    // committed input)
    inbox.pipeInput("alice", message("d:alice:bob", 1, "bob"));
    assertThat(below("alice", "d:alice:bob").unread()).isEqualTo(1);
    assertThat(checkpoint()).isEqualTo(0L);

    // Within the interval the changes stay in memory: read back at once, not yet below
    inbox.pipeInput("alice", message("d:alice:bob", 2, "bob"));
    inbox.pipeInput("alice", message("d:alice:carol", 1, "carol"));
    assertThat(current("alice", "d:alice:bob").unread()).isEqualTo(2);
    assertThat(below("alice", "d:alice:bob").unread()).isEqualTo(1);
    assertThat(below("alice", "d:alice:carol")).isNull();
    assertThat(checkpoint()).isEqualTo(0L);

    // Once the interval is up, the next commit writes them all, with the checkpoint of the last entry
    driver.advanceWallClockTime(Duration.ofSeconds(30));
    inbox.pipeInput("alice", message("d:alice:bob", 3, "bob"));
    assertThat(below("alice", "d:alice:bob").unread()).isEqualTo(3);
    assertThat(below("alice", "d:alice:carol").unread()).isEqualTo(1);
    assertThat(checkpoint()).isEqualTo(3L);
  }

  @Test
  void tooManyWaitingStatesAreWrittenBeforeTheInterval() {
    start(Map.of("IM_CONVERSATION_CHECKPOINT_INTERVAL", "10m", "IM_CONVERSATION_CHECKPOINT_MAX_PENDING", "3"));
    inbox.pipeInput("alice", message("d:alice:c0", 1, "c0"));
    inbox.pipeInput("alice", message("d:alice:c1", 1, "c1"));
    inbox.pipeInput("alice", message("d:alice:c2", 1, "c2"));
    assertThat(below("alice", "d:alice:c1")).as("two waiting: under the maximum").isNull();
    assertThat(checkpoint()).isEqualTo(0L);

    inbox.pipeInput("alice", message("d:alice:c3", 1, "c3"));
    assertThat(below("alice", "d:alice:c1")).as("three waiting: all written").isNotNull();
    assertThat(below("alice", "d:alice:c3")).isNotNull();
    assertThat(checkpoint()).isEqualTo(3L);
  }

  @Test
  void intervalZeroWritesAtEveryCommit() {
    start(Map.of("IM_CONVERSATION_CHECKPOINT_INTERVAL", "0"));
    for (long seq = 1; seq <= 3; seq++) {
      inbox.pipeInput("alice", message("d:alice:bob", seq, "bob"));
      assertThat(below("alice", "d:alice:bob").unread()).isEqualTo(seq);
      assertThat(checkpoint()).isEqualTo(seq - 1);
    }
  }

  @Test
  void aCheckpointKeyNamesItsPartition() {
    TopicPartition tp = new TopicPartition("im.inbox.g2", 11);
    assertThat(ListCheckpoints.partition(ListCheckpoints.key(tp))).isEqualTo(tp);
  }

  private ConversationState current(String user, String conversation) {
    byte[] v = states().get(ConversationKeys.state(user, conversation));
    return v == null ? null : ConversationState.decode(v);
  }

  private ConversationState below(String user, String conversation) {
    byte[] v = WriteBackStore.of(states()).wrapped().get(ConversationKeys.state(user, conversation));
    return v == null ? null : ConversationState.decode(v);
  }

  private KeyValueStore<Bytes, byte[]> states() {
    return driver.getKeyValueStore(ConversationTopology.STATES_STORE);
  }

  private Long checkpoint() {
    KeyValueStore<String, Long> store = driver.getKeyValueStore(ConversationTopology.STATES_STORE + "-checkpoints");
    return store.get(ListCheckpoints.key(new TopicPartition(topics.inbox().name(), 0)));
  }

  private static InboxEntry message(String conversation, long seq, String sender) {
    return InboxEntry.newBuilder().setUserId("alice").setType(InboxEntryType.MESSAGE).setConversationId(conversation)
        .setConversationSeq(seq).setMessageId(conversation + "/m" + seq).setSenderId(sender).setBody("body " + seq)
        .setTimestamp(T.plusSeconds(seq)).build();
  }
}
