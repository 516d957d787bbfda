package dev.impipe.inbox;

import static dev.impipe.inbox.TestData.message;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.Timelines;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code IM_INBOX_MAX_PER_USER} on a user already far over it (the cap was just turned on or lowered): each new entry
 * evicts at most two old ones, so no single record's transaction deletes the whole excess, and the user converges to
 * the cap.
 */
class InboxCapTest {

  private static final String REGISTRY = "mock://inbox-cap-test";
  private static final Instant START = Instant.parse("2025-03-01T12:00:00Z");

  @TempDir
  Path stateDir;

  private final ImTopics topics = new ImTopics(TopicNames.withPrefix("im."),
      InMemorySchemaRegistry.forScope(REGISTRY));

  @AfterEach
  void tearDown() {
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  @Test
  void aUserFarOverTheCapShrinksByOneEntryPerNewEntry() {
    InboxStoreConfig cfg = InboxStoreConfig.fromEnv(Map.of("IM_INBOX_MAX_PER_USER", "3"));
    try (TopologyTestDriver driver = new TopologyTestDriver(InboxStoreTopology.build(topics, cfg),
        StreamsTestConfig.forDriver("inbox-store", topics.names(), stateDir), START)) {
      TestInputTopic<String, InboxEntry> inbox = driver.createInputTopic(topics.inbox().name(),
          topics.inbox().keySerde().serializer(), topics.inbox().valueSerde().serializer());
      KeyValueStore<Bytes, InboxEntry> entries = driver.getKeyValueStore(InboxStoreTopology.INBOX_STORE);
      KeyValueStore<Bytes, Long> counts = driver.getKeyValueStore(InboxStoreTopology.INBOX_COUNT_STORE);
      // Given bob holds 10 entries (seqs 0-9), stored before the cap of 3 was turned on
      for (int i = 0; i < 10; i++) {
        inbox.pipeInput("bob", message("bob", "c1", "b" + i, START), START);
      }
      for (long seq = 0; seq < 10; seq++) {
        entries.put(StoreKeys.entry("bob", seq), message("bob", "c1", "b" + seq, START));
      }
      counts.put(StoreKeys.owner("bob"), 10L);

      // When one more entry arrives (seq 10)
      inbox.pipeInput("bob", message("bob", "c1", "b10", START), START);

      // Then only the two oldest went: 9 left, not 3
      assertThat(seqs(driver, "bob")).containsExactlyElementsOf(range(2, 10));
      assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(9L);

      // And each further entry shrinks bob by one until he is at the cap (seqs 11-16), then he stays there (17)
      for (int i = 11; i <= 16; i++) {
        inbox.pipeInput("bob", message("bob", "c1", "b" + i, START), START);
      }
      assertThat(seqs(driver, "bob")).containsExactlyElementsOf(range(14, 16));
      inbox.pipeInput("bob", message("bob", "c1", "b17", START), START);
      assertThat(seqs(driver, "bob")).containsExactlyElementsOf(range(15, 17));
      assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(3L);
    }
  }

  private static List<Long> seqs(TopologyTestDriver driver, String user) {
    Page<InboxEntry> page = Timelines.after(
        StoreView.of(driver.<Bytes, InboxEntry>getKeyValueStore(InboxStoreTopology.INBOX_STORE)), user,
        Timelines.START, 100);
    return page.entries().stream().map(Page.Entry::seq).toList();
  }

  private static List<Long> range(long from, long toInclusive) {
    return LongStream.rangeClosed(from, toInclusive).boxed().toList();
  }
}
