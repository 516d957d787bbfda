package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.conversations.ConversationMaterialiser;
import dev.impipe.inbox.conversations.ConversationTopology;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.streams.StreamThreadConsumers;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import dev.impipe.testkit.Drain;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.testkit.TestTmpDir;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A clean restart of the inbox store on the same state directory restores nothing: every task starts from its
 * local stores, none is taken for crashed and wiped. Among its stores is one never written in normal operation (the
 * copy index, a window store without any segment), which Kafka Streams 4.3 left without committed offsets after a
 * clean close, so that every task was wiped and restored from the changelogs' start at every restart.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CleanRestartIT {

  private static final int PARTITIONS = 2;

  @Test
  void aCleanlyClosedInboxStoreRestartsFromItsLocalStores() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("clean-restart") + ".";
    ImConfig config = ImConfig.fromEnv(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS",
        Integer.toString(PARTITIONS), "IM_CONVERSATION_PARTITIONS", "2"))
        .withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    Path stateDir = TestTmpDir.newDir("clean-restart");
    String appId = prefix + InboxStoreTopology.APP_NAME;
    Properties props = StreamsTestConfig.forBroker(env.bootstrapServers(), names, appId, stateDir);
    props.put(StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, true);
    props.put(StreamsConfig.DEFAULT_CLIENT_SUPPLIER_CONFIG, StreamThreadConsumers.class.getName());
    // A closed Streams member does not leave its group: let the second run take over after 6 s, not 45 s.
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1000);

    try (KafkaProducer<String, InboxEntry> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
        env.bootstrapServers(), "enable.idempotence", true, "acks", "all"), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer())) {
      // First run: entries on every partition, so that every task has stores that are not empty.
      try (KafkaStreams first = new KafkaStreams(InboxStoreTopology.build(topics, InboxStoreConfig.defaults()),
          props)) {
        first.start();
        sendToEveryPartition(producer, topics, "first");
        Drain.awaitCaughtUp(env.bootstrapServers(), appId, List.of(names.inbox()), Duration.ofSeconds(90));
        first.close(Duration.ofSeconds(60));
        assertThat(first.state()).isEqualTo(KafkaStreams.State.NOT_RUNNING);
      }

      // Second run on the same state dir: nothing is restored from the changelogs.
      Restores restores = new Restores();
      try (KafkaStreams second = new KafkaStreams(InboxStoreTopology.build(topics, InboxStoreConfig.defaults()),
          props)) {
        second.setGlobalStateRestoreListener(restores);
        second.start();
        // Every task has processed a new entry, so none is restoring any more.
        sendToEveryPartition(producer, topics, "second");
        Drain.awaitCaughtUp(env.bootstrapServers(), appId, List.of(names.inbox()), Duration.ofSeconds(90));
        second.close(Duration.ofSeconds(60));
      }
      // The list's checkpoints are an in-memory store: restored at every start by design (a few records).
      String inMemory = new ConversationMaterialiser.Stores(ConversationTopology.STATES_STORE).checkpoints();
      restores.restored.keySet().removeIf(store -> store.startsWith(inMemory + " "));
      assertThat(restores.restored).as("records restored per store and partition after a clean restart").isEmpty();
    }
    dev.impipe.embedded.Dirs.deleteRecursively(stateDir);
  }

  /** One entry to each partition of the inbox, for a user the default partitioner puts there. */
  private static void sendToEveryPartition(KafkaProducer<String, InboxEntry> producer, ImTopics topics,
      String round) throws Exception {
    for (int p = 0; p < PARTITIONS; p++) {
      String user = userOn(p, topics);
      producer.send(new ProducerRecord<>(topics.inbox().name(), user,
          TestData.message(user, "d:" + user + ":zed", round + "-" + user, Instant.now()))).get(30, TimeUnit.SECONDS);
    }
  }

  private static String userOn(int partition, ImTopics topics) {
    for (int i = 0;; i++) {
      String user = "user" + i;
      byte[] key = topics.inbox().keySerde().serializer().serialize(topics.inbox().name(), user);
      if (org.apache.kafka.common.utils.Utils.toPositive(org.apache.kafka.common.utils.Utils.murmur2(key))
          % PARTITIONS == partition) {
        return user;
      }
    }
  }

  /** Records restored, per store, as the stream threads report them. */
  private static final class Restores implements StateRestoreListener {
    final Map<String, AtomicLong> restored = new ConcurrentHashMap<>();

    @Override
    public void onRestoreStart(TopicPartition partition, String storeName, long startingOffset, long endingOffset) {}

    @Override
    public void onBatchRestored(TopicPartition partition, String storeName, long batchEndOffset, long numRestored) {
      if (numRestored > 0) {
        restored.computeIfAbsent(storeName + " " + partition.partition(), k -> new AtomicLong())
            .addAndGet(numRestored);
      }
    }

    @Override
    public void onRestoreEnd(TopicPartition partition, String storeName, long totalRestored) {}
  }
}
