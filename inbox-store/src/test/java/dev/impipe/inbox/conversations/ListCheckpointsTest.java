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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
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
  private static final String CAROL = "carol";
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
  void changesReachTheStoreOnceAnIntervalWhenTheirBucketsTurnComesWithTheCheckpointOfTheLastEntryTheyHold() {
    // 32 buckets, one written every second in turn
    start(Map.of("IM_CONVERSATION_CHECKPOINT_INTERVAL", "32s"));
    // carol's states are in bucket 17: the turns of buckets 0 to 16 come first
    int bucket = ListCheckpoints.bucket(CAROL);
    assertThat(bucket).isEqualTo(17);
    // The first entry after the start is written at once, every bucket (a task's states without a checkpoint are
    // those of its committed input)
    inbox.pipeInput(CAROL, message(CAROL, "d:carol:bob", 1, "bob"));
    assertThat(below(CAROL, "d:carol:bob").unread()).isEqualTo(1);
    assertThat(checkpoint(bucket)).isEqualTo(0L);
    assertThat(checkpoint((bucket + 1) % WriteBackStore.BUCKETS)).isEqualTo(0L);

    // Within the interval the changes stay in memory: read back at once, not yet below
    inbox.pipeInput(CAROL, message(CAROL, "d:carol:bob", 2, "bob"));
    inbox.pipeInput(CAROL, message(CAROL, "d:carol:erin", 1, "erin"));
    assertThat(current(CAROL, "d:carol:bob").unread()).isEqualTo(2);
    assertThat(below(CAROL, "d:carol:bob").unread()).isEqualTo(1);
    assertThat(below(CAROL, "d:carol:erin")).isNull();

    // Each second the next bucket is written; carol's states when hers comes, with the checkpoint of the last entry
    long offset = 2;
    for (int turn = 0; turn < bucket; turn++) {
      driver.advanceWallClockTime(Duration.ofSeconds(1));
      inbox.pipeInput(CAROL, message(CAROL, "d:carol:dan", turn + 1, "dan"));
      offset++;
      assertThat(below(CAROL, "d:carol:erin")).as("bucket %d written, not carol's", turn).isNull();
      assertThat(checkpoint(turn)).isEqualTo(offset);
    }
    driver.advanceWallClockTime(Duration.ofSeconds(1));
    inbox.pipeInput(CAROL, message(CAROL, "d:carol:bob", 3, "bob"));
    offset++;
    assertThat(below(CAROL, "d:carol:bob").unread()).isEqualTo(3);
    assertThat(below(CAROL, "d:carol:erin").unread()).isEqualTo(1);
    assertThat(checkpoint(bucket)).isEqualTo(offset);
    if (bucket + 1 < WriteBackStore.BUCKETS) {
      assertThat(checkpoint(bucket + 1)).as("the next bucket's turn is to come").isEqualTo(0L);
    }
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
  void aCheckpointKeyNamesItsPartitionAndBucket() {
    TopicPartition tp = new TopicPartition("im.inbox.g2", 11);
    assertThat(ListCheckpoints.partition(ListCheckpoints.key(tp))).isEqualTo(tp);
    assertThat(ListCheckpoints.key(tp, 7)).isEqualTo("im.inbox.g2/11/7");
  }

  @Test
  void aReplayAppliesEachEntryAfterItsUsersBucketsCheckpointOnly() {
    KeyValueStore<String, Long> store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("cp"),
        Serdes.String(), Serdes.Long()).withLoggingDisabled().build();
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
    TopicPartition tp = new TopicPartition("im.inbox", 3);
    String bob = "bob";
    while (ListCheckpoints.bucket(bob) == ListCheckpoints.bucket("alice")) {
      bob = bob + "b";
    }
    // Every bucket written at offset 5 (or by a build without buckets), alice's again at 9; bob's own, 4, is older
    store.put(ListCheckpoints.key(tp), 5L);
    store.put(ListCheckpoints.key(tp, ListCheckpoints.bucket("alice")), 9L);
    store.put(ListCheckpoints.key(tp, ListCheckpoints.bucket(bob)), 4L);

    long[] byBucket = ListCheckpoints.checkpoints(store).get(tp);
    assertThat(byBucket[ListCheckpoints.bucket("alice")]).isEqualTo(9L);
    assertThat(byBucket[ListCheckpoints.bucket(bob)]).as("the greater of its own and the partition's").isEqualTo(5L);
    List<String> applied = new ArrayList<>();
    ListCheckpoints.AfterCheckpoints sink = new ListCheckpoints.AfterCheckpoints(byBucket,
        (offset, user, entry) -> applied.add(user + "@" + offset));
    for (long offset = 6; offset <= 10; offset++) {
      sink.apply(offset, "alice", null);
      sink.apply(offset, bob, null);
      sink.apply(offset, null, null);
    }
    assertThat(applied).containsExactly(bob + "@6", bob + "@7", bob + "@8", bob + "@9", "alice@10", bob + "@10");
    assertThat(sink.applied()).isEqualTo(6);
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

  /** The checkpoint of alice's bucket. */
  private Long checkpoint() {
    return checkpoint(ListCheckpoints.bucket("alice"));
  }

  /** A bucket's checkpoint: the greater of its own and the partition's (written when every bucket was). */
  private Long checkpoint(int bucket) {
    KeyValueStore<String, Long> store = driver.getKeyValueStore(ConversationTopology.STATES_STORE + "-checkpoints");
    TopicPartition tp = new TopicPartition(topics.inbox().name(), 0);
    Long whole = store.get(ListCheckpoints.key(tp));
    Long own = store.get(ListCheckpoints.key(tp, bucket));
    return whole == null ? own : own == null ? whole : Long.valueOf(Math.max(whole, own));
  }

  private static InboxEntry message(String conversation, long seq, String sender) {
    return message("alice", conversation, seq, sender);
  }

  private static InboxEntry message(String user, String conversation, long seq, String sender) {
    return InboxEntry.newBuilder().setUserId(user).setType(InboxEntryType.MESSAGE).setConversationId(conversation)
        .setConversationSeq(seq).setMessageId(conversation + "/m" + seq).setSenderId(sender).setBody("body " + seq)
        .setTimestamp(T.plusSeconds(seq)).build();
  }
}
