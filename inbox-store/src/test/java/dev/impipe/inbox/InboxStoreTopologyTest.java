package dev.impipe.inbox;

import static dev.impipe.inbox.TestData.chat;
import static dev.impipe.inbox.TestData.cursor;
import static dev.impipe.inbox.TestData.message;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.Timelines;
import dev.impipe.runtime.domain.HistoryKey;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The production topology on a TopologyTestDriver: what the stores hold and what sync/history reads return. */
class InboxStoreTopologyTest {

  private static final String REGISTRY = "mock://inbox-test";
  /** Wall-clock time when each test starts. */
  private static final Instant START = Instant.parse("2025-03-01T12:00:00Z");

  @TempDir
  Path stateDir;

  private ImTopics topics;

  @BeforeEach
  void setUp() {
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(REGISTRY));
  }

  @AfterEach
  void tearDown() {
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  @Test
  void aDeviceSyncsExactlyTheEntriesAfterItsCursor() {
    try (TopologyTestDriver driver = driver(InboxStoreConfig.defaults())) {
      TestInputTopic<String, InboxEntry> inbox = inboxTopic(driver);
      TestInputTopic<String, DeviceCursor> cursors = cursorTopic(driver);

      // Given bob's and bobby's entries interleaved in one partition (offsets 0..6): bob has 0, 2, 4, 5, 6
      String[] owners = {"bob", "bobby", "bob", "bobby", "bob", "bob", "bob"};
      for (int i = 0; i < owners.length; i++) {
        inbox.pipeInput(owners[i], message(owners[i], "c1", "b" + i, START), START);
      }
      // and bob's phone has committed its cursor at seq 2
      cursors.pipeInput("bob", cursor("bob", "phone", 2), START);

      // When the phone syncs with a limit of 2
      long cursor = Timelines.cursor(cursors(driver), "bob", "phone");
      Page<InboxEntry> first = Timelines.after(inbox(driver), "bob", cursor, 2);

      // Then it gets bob's next two entries with their offsets as seqs (not consecutive), and more is waiting
      assertThat(cursor).isEqualTo(2);
      assertThat(seqs(first)).containsExactly(4L, 5L);
      assertThat(first.entries().get(0).value().getBody()).isEqualTo("b4");
      assertThat(first.next()).isEqualTo(5L);
      assertThat(first.hasMore()).isTrue();

      // When it commits next and syncs again
      cursors.pipeInput("bob", cursor("bob", "phone", first.next()), START);
      Page<InboxEntry> second = Timelines.after(inbox(driver), "bob", Timelines.cursor(cursors(driver), "bob",
          "phone"), 2);

      // Then it gets only the entry it had not seen, and nothing more
      assertThat(seqs(second)).containsExactly(6L);
      assertThat(second.hasMore()).isFalse();

      // And a device that never committed reads bob's whole inbox; an unknown user has an empty one
      assertThat(seqs(Timelines.after(inbox(driver), "bob", Timelines.cursor(cursors(driver), "bob", "laptop"),
          100))).containsExactly(0L, 2L, 4L, 5L, 6L);
      Page<InboxEntry> nobody = Timelines.after(inbox(driver), "nobody", Timelines.START, 100);
      assertThat(nobody.entries()).isEmpty();
      assertThat(nobody.next()).isEqualTo(Timelines.START);
      assertThat(nobody.hasMore()).isFalse();
    }
  }

  @Test
  void aCursorOnlyMovesForward() {
    try (TopologyTestDriver driver = driver(InboxStoreConfig.defaults())) {
      TestInputTopic<String, DeviceCursor> cursors = cursorTopic(driver);

      // Given the phone committed seq 10
      cursors.pipeInput("bob", cursor("bob", "phone", 10), START);

      // When an older commit (5) arrives late
      cursors.pipeInput("bob", cursor("bob", "phone", 5), START);

      // Then the cursor stays at 10
      assertThat(Timelines.cursor(cursors(driver), "bob", "phone")).isEqualTo(10);

      // When a newer commit (12) arrives, it moves; another device of the same user is independent
      cursors.pipeInput("bob", cursor("bob", "phone", 12), START);
      cursors.pipeInput("bob", cursor("bob", "laptop", 3), START);
      assertThat(Timelines.cursor(cursors(driver), "bob", "phone")).isEqualTo(12);
      assertThat(Timelines.cursor(cursors(driver), "bob", "laptop")).isEqualTo(3);
    }
  }

  @Test
  void retentionRemovesExpiredEntriesAndTheirIndexOnWallClockPunctuation() {
    InboxStoreConfig cfg = InboxStoreConfig.fromEnv(Map.of("IM_INBOX_RETENTION", "7d",
        "IM_INBOX_RETENTION_INTERVAL", "1m"));
    try (TopologyTestDriver driver = driver(cfg)) {
      TestInputTopic<String, InboxEntry> inbox = inboxTopic(driver);

      // Given (now = START) entries written 8 days, 6 days 23h30m and 1 hour ago
      Instant eightDaysAgo = START.minus(Duration.ofDays(8));
      Instant almostSevenDaysAgo = START.minus(Duration.ofDays(7)).plus(Duration.ofMinutes(30));
      inbox.pipeInput("bob", message("bob", "c1", "old", eightDaysAgo), eightDaysAgo);
      inbox.pipeInput("bob", message("bob", "c1", "older-than-a-week-soon", almostSevenDaysAgo),
          almostSevenDaysAgo);
      inbox.pipeInput("bob", message("bob", "c1", "fresh", START.minus(Duration.ofHours(1))),
          START.minus(Duration.ofHours(1)));
      assertThat(seqs(Timelines.after(inbox(driver), "bob", Timelines.START, 100))).containsExactly(0L, 1L, 2L);

      // When the punctuator runs (now = START + 1 min)
      driver.advanceWallClockTime(Duration.ofMinutes(1));

      // Then only the 8-day-old entry is gone, from the store and from the time index
      assertThat(seqs(Timelines.after(inbox(driver), "bob", Timelines.START, 100))).containsExactly(1L, 2L);
      assertThat(keys(driver.getKeyValueStore(InboxStoreTopology.INBOX_TIME_INDEX_STORE))).hasSize(2);

      // When 30 more minutes pass (now = START + 31 min): the second entry is now older than 7 days
      driver.advanceWallClockTime(Duration.ofMinutes(30));

      // Then it is removed too; the fresh one stays, and bob's entry count follows
      assertThat(seqs(Timelines.after(inbox(driver), "bob", Timelines.START, 100))).containsExactly(2L);
      assertThat(keys(driver.getKeyValueStore(InboxStoreTopology.INBOX_TIME_INDEX_STORE))).hasSize(1);
      KeyValueStore<Bytes, Long> counts = driver.getKeyValueStore(InboxStoreTopology.INBOX_COUNT_STORE);
      assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(1L);
    }
  }

  @Test
  void thePerUserCapEvictsTheOldestEntries() {
    InboxStoreConfig cfg = InboxStoreConfig.fromEnv(Map.of("IM_INBOX_MAX_PER_USER", "3"));
    try (TopologyTestDriver driver = driver(cfg)) {
      TestInputTopic<String, InboxEntry> inbox = inboxTopic(driver);

      // Given a cap of 3, when bob receives 5 entries and alice 1
      for (int i = 0; i < 5; i++) {
        inbox.pipeInput("bob", message("bob", "c1", "b" + i, START), START);
      }
      inbox.pipeInput("alice", message("alice", "c1", "a0", START), START);

      // Then bob keeps his 3 newest; alice is not affected
      assertThat(seqs(Timelines.after(inbox(driver), "bob", Timelines.START, 100))).containsExactly(2L, 3L, 4L);
      assertThat(seqs(Timelines.after(inbox(driver), "alice", Timelines.START, 100))).containsExactly(5L);

      // And when everything expires (now = START + 8 days), the time index and the count are cleaned up
      // (anEntryEvictedByTheCapIsNotUncountedAgainWhenItExpires shows the count is not decremented twice)
      driver.advanceWallClockTime(Duration.ofDays(8));
      assertThat(keys(driver.getKeyValueStore(InboxStoreTopology.INBOX_TIME_INDEX_STORE))).isEmpty();
      KeyValueStore<Bytes, Long> counts = driver.getKeyValueStore(InboxStoreTopology.INBOX_COUNT_STORE);
      assertThat(counts.get(StoreKeys.owner("bob"))).isNull();
    }
  }

  @Test
  void anEntryEvictedByTheCapIsNotUncountedAgainWhenItExpires() {
    InboxStoreConfig cfg = InboxStoreConfig.fromEnv(Map.of("IM_INBOX_MAX_PER_USER", "3", "IM_INBOX_RETENTION", "7d",
        "IM_INBOX_RETENTION_INTERVAL", "1m"));
    try (TopologyTestDriver driver = driver(cfg)) {
      TestInputTopic<String, InboxEntry> inbox = inboxTopic(driver);

      // Given (now = START) a cap of 3: bob gets two entries written almost 7 days ago, then three fresh ones,
      // so the cap evicts the two old ones at once (their time-index entries stay until they expire)
      Instant almostSevenDaysAgo = START.minus(Duration.ofDays(7)).plus(Duration.ofMinutes(30));
      inbox.pipeInput("bob", message("bob", "c1", "old-0", almostSevenDaysAgo), almostSevenDaysAgo);
      inbox.pipeInput("bob", message("bob", "c1", "old-1", almostSevenDaysAgo), almostSevenDaysAgo);
      for (int i = 2; i < 5; i++) {
        inbox.pipeInput("bob", message("bob", "c1", "fresh-" + i, START), START);
      }
      assertThat(seqs(Timelines.after(inbox(driver), "bob", Timelines.START, 100))).containsExactly(2L, 3L, 4L);
      KeyValueStore<Bytes, Long> counts = driver.getKeyValueStore(InboxStoreTopology.INBOX_COUNT_STORE);
      assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(3L);

      // When the two evicted entries' time-index entries expire (now = START + 31 min)
      driver.advanceWallClockTime(Duration.ofMinutes(31));

      // Then their index entries are gone, but bob still has 3 entries and a count of 3 (not 1)
      assertThat(keys(driver.getKeyValueStore(InboxStoreTopology.INBOX_TIME_INDEX_STORE))).hasSize(3);
      assertThat(seqs(Timelines.after(inbox(driver), "bob", Timelines.START, 100))).containsExactly(2L, 3L, 4L);
      assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(3L);

      // And a fourth fresh entry still evicts exactly one (the cap works from the right count)
      inbox.pipeInput("bob", message("bob", "c1", "fresh-5", START), START);
      assertThat(seqs(Timelines.after(inbox(driver), "bob", Timelines.START, 100))).containsExactly(3L, 4L, 5L);
      assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(3L);
    }
  }

  @Test
  void historyPagesNewestFirstWithBefore() {
    try (TopologyTestDriver driver = driver(InboxStoreConfig.defaults())) {
      TestInputTopic<String, ChatMessage> history = driver.createInputTopic(topics.history().name(),
          topics.history().keySerde().serializer(), topics.history().valueSerde().serializer());

      // Given conversation g1 with 5 accepted messages (conversation seqs 0,1,3,5,6) and g10 (an id with g1 as prefix) in between
      String[] conversations = {"g1", "g1", "g10", "g1", "g10", "g1", "g1"};
      for (int i = 0; i < conversations.length; i++) {
        history.pipeInput(HistoryKey.of(conversations[i], i), chat(conversations[i], "alice", "m" + i,
            START.plusSeconds(i)), START.plusSeconds(i));
      }
      StoreView<ChatMessage> timeline = StoreView.of(driver.getKeyValueStore(InboxStoreTopology.TIMELINE_STORE));

      // When reading the newest 2, then paging with before = next
      Page<ChatMessage> first = Timelines.before(timeline, "g1", OptionalLong.empty(), 2);
      Page<ChatMessage> second = Timelines.before(timeline, "g1", OptionalLong.of(first.next()), 2);
      Page<ChatMessage> third = Timelines.before(timeline, "g1", OptionalLong.of(second.next()), 2);

      // Then pages run newest first without gaps or overlaps, and only the last says there is no more
      assertThat(seqs(first)).containsExactly(6L, 5L);
      assertThat(first.hasMore()).isTrue();
      assertThat(first.entries().get(0).value().getBody()).isEqualTo("m6");
      assertThat(seqs(second)).containsExactly(3L, 1L);
      assertThat(second.hasMore()).isTrue();
      assertThat(seqs(third)).containsExactly(0L);
      assertThat(third.hasMore()).isFalse();
      assertThat(seqs(Timelines.before(timeline, "g10", OptionalLong.empty(), 100))).containsExactly(4L, 2L);
      assertThat(Timelines.before(timeline, "g1", OptionalLong.of(0), 100).entries()).isEmpty();
    }
  }

  @Test
  void conversationTimelinesAreKeptForeverByDefault() {
    try (TopologyTestDriver driver = driver(InboxStoreConfig.defaults())) {
      TestInputTopic<String, ChatMessage> history = driver.createInputTopic(topics.history().name(),
          topics.history().keySerde().serializer(), topics.history().valueSerde().serializer());

      // Given a message sent a year ago
      Instant yearAgo = START.minus(Duration.ofDays(365));
      history.pipeInput(HistoryKey.of("g1", 0), chat("g1", "alice", "ancient", yearAgo), yearAgo);

      // When a day of punctuations passes (now = START + 1 day)
      driver.advanceWallClockTime(Duration.ofDays(1));

      // Then it is still in the history
      StoreView<ChatMessage> timeline = StoreView.of(driver.getKeyValueStore(InboxStoreTopology.TIMELINE_STORE));
      assertThat(seqs(Timelines.before(timeline, "g1", OptionalLong.empty(), 10))).containsExactly(0L);
      // and history that never expires needs no retention index: nothing grows beside the history itself
      assertThat(keys(driver.getKeyValueStore(InboxStoreTopology.TIMELINE_TIME_INDEX_STORE))).isEmpty();
    }
  }

  @Test
  void anEntryWhoseKeyIsNotItsUserIsRejectedNotStored() {
    try (TopologyTestDriver driver = driver(InboxStoreConfig.defaults())) {
      TestInputTopic<String, InboxEntry> inbox = inboxTopic(driver);

      // When an entry of alice arrives keyed by bob (a producer bug), then a good one
      inbox.pipeInput("bob", message("alice", "c1", "misrouted", START), START);
      inbox.pipeInput("bob", message("bob", "c1", "good", START), START);

      // Then the bad one is in neither inbox, it went to the rejected topic, and processing went on
      assertThat(seqs(Timelines.after(inbox(driver), "bob", Timelines.START, 100))).containsExactly(1L);
      assertThat(Timelines.after(inbox(driver), "alice", Timelines.START, 100).entries()).isEmpty();
      assertThat(rejected(driver)).singleElement().satisfies(r -> {
        assertThat(header(r, RejectedHeaders.CODE)).isEqualTo(RejectedRecord.INVALID);
        assertThat(header(r, RejectedHeaders.MESSAGE)).isEqualTo("key 'bob' is not the userId of the value "
            + "('alice'): the record would be stored where no query finds it");
      });
    }
  }

  @Test
  void aHistoryRecordWhoseKeyIsNotConversationAndSeqIsRejectedAndTheNextIsStored() {
    try (TopologyTestDriver driver = driver(InboxStoreConfig.defaults())) {
      TestInputTopic<String, ChatMessage> history = driver.createInputTopic(topics.history().name(),
          topics.history().keySerde().serializer(), topics.history().valueSerde().serializer());

      // When a history record's key has no seq (a producer bug), then a good one
      history.pipeInput("g1", chat("g1", "alice", "no seq", START), START);
      history.pipeInput(HistoryKey.of("g1", 0), chat("g1", "alice", "good", START), START);

      // Then the bad one went to the rejected topic with its reason, and processing went on
      assertThat(rejected(driver)).singleElement().satisfies(r -> {
        assertThat(header(r, RejectedHeaders.CODE)).isEqualTo(RejectedRecord.INVALID);
        assertThat(header(r, RejectedHeaders.MESSAGE)).isEqualTo("history key 'g1' is not conversationId|seq");
      });
      StoreView<ChatMessage> timeline = StoreView.of(driver.getKeyValueStore(InboxStoreTopology.TIMELINE_STORE));
      assertThat(seqs(Timelines.before(timeline, "g1", OptionalLong.empty(), 10))).containsExactly(0L);
    }
  }

  private List<TestRecord<byte[], byte[]>> rejected(TopologyTestDriver driver) {
    return driver.createOutputTopic(topics.names().rejected(), new ByteArrayDeserializer(),
        new ByteArrayDeserializer()).readRecordsToList();
  }

  private static String header(TestRecord<byte[], byte[]> record, String name) {
    return new String(record.headers().lastHeader(name).value(), java.nio.charset.StandardCharsets.UTF_8);
  }

  private TopologyTestDriver driver(InboxStoreConfig cfg) {
    return new TopologyTestDriver(InboxStoreTopology.build(topics, cfg),
        StreamsTestConfig.forDriver("inbox-store", topics.names(), stateDir), START);
  }

  private TestInputTopic<String, InboxEntry> inboxTopic(TopologyTestDriver driver) {
    return driver.createInputTopic(topics.inbox().name(), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer());
  }

  private TestInputTopic<String, DeviceCursor> cursorTopic(TopologyTestDriver driver) {
    return driver.createInputTopic(topics.deviceCursors().name(), topics.deviceCursors().keySerde().serializer(),
        topics.deviceCursors().valueSerde().serializer());
  }

  private static StoreView<InboxEntry> inbox(TopologyTestDriver driver) {
    return StoreView.of(driver.getKeyValueStore(InboxStoreTopology.INBOX_STORE));
  }

  private static StoreView<Long> cursors(TopologyTestDriver driver) {
    return StoreView.of(driver.getKeyValueStore(InboxStoreTopology.CURSOR_STORE));
  }

  private static List<Long> seqs(Page<?> page) {
    return page.entries().stream().map(Page.Entry::seq).toList();
  }

  private static <V> List<Bytes> keys(KeyValueStore<Bytes, V> store) {
    List<Bytes> keys = new ArrayList<>();
    try (KeyValueIterator<Bytes, V> it = store.all()) {
      it.forEachRemaining((KeyValue<Bytes, V> kv) -> keys.add(kv.key));
    }
    return keys;
  }

  @Test
  void theRecallIndexIsKeptAsLongAsTheInbox() {
    // An inbox kept 30 days: its recall index too
    InboxStoreConfig month = InboxStoreConfig.fromEnv(Map.of("IM_INBOX_RETENTION", "30d"));
    assertThat(InboxStoreTopology.recallIndexRetention(month)).isEqualTo(Duration.ofDays(30));
    // An inbox kept forever: a window of a century, not an overflowing one
    assertThat(InboxStoreTopology.recallIndexRetention(InboxStoreConfig.fromEnv(Map.of("IM_INBOX_RETENTION",
        "forever")))).isEqualTo(Duration.ofDays(36_500));
  }
}
