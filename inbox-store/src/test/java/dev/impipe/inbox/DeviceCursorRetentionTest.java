package dev.impipe.inbox;

import static dev.impipe.inbox.TestData.cursor;
import static dev.impipe.inbox.TestData.message;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.inbox.query.Timelines;
import dev.impipe.runtime.streams.VersionedValue;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code device-cursors} stays bounded: a device cursor (and a device's position in a large group, device id
 * {@code device#group}) not committed for {@code IM_DEVICE_CURSOR_RETENTION} (default: the inbox retention) is
 * removed by the budgeted retention sweep, changelog included; a device that comes back reads exactly what it had
 * not seen, since everything up to its old cursor has expired from the inbox by then.
 */
class DeviceCursorRetentionTest {

  private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");
  private static final Duration DAY = Duration.ofDays(1);
  private static final Duration SWEEP = Duration.ofMinutes(1);

  private String registryUrl;
  private ImTopics topics;
  private TopologyTestDriver driver;
  private TestInputTopic<String, DeviceCursor> cursors;
  private TestInputTopic<String, InboxEntry> inbox;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://cursor-retention-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
  }

  @AfterEach
  void tearDown() {
    if (driver != null) {
      driver.close();
    }
    InMemorySchemaRegistry.drop(registryUrl);
  }

  private void start(Map<String, String> env) {
    driver = new TopologyTestDriver(InboxStoreTopology.build(topics, InboxStoreConfig.fromEnv(env)),
        StreamsTestConfig.forDriver("inbox-store"), START);
    cursors = driver.createInputTopic(topics.deviceCursors().name(), topics.deviceCursors().keySerde().serializer(),
        topics.deviceCursors().valueSerde().serializer());
    inbox = driver.createInputTopic(topics.inbox().name(), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer());
  }

  @Test
  void aCursorNotCommittedForTheRetentionIsRemovedWithItsGroupPositions() {
    start(Map.of());
    String phoneInGroup = SyncCursor.groupDevice("phone", "g1");
    cursors.pipeInput("bob", cursor("bob", "phone", 4), START);
    cursors.pipeInput("bob", cursor("bob", phoneInGroup, 9), START);
    cursors.pipeInput("bob", cursor("bob", "laptop", 4), START.plus(DAY.multipliedBy(6)));

    driver.advanceWallClockTime(DAY.multipliedBy(7).minus(SWEEP));
    assertThat(cursorKeys()).as("not yet").isEqualTo(3);

    // A pass over all cursors starts at most once per retention/10 (16.8 h): removed within 1.1 x the retention
    driver.advanceWallClockTime(Duration.ofHours(17));

    assertThat(stored("phone")).isEqualTo(Timelines.START);
    assertThat(stored(phoneInGroup)).isEqualTo(Timelines.START);
    assertThat(stored("laptop")).as("committed 1.7 days ago").isEqualTo(4);
    assertThat(cursorKeys()).isEqualTo(1);
    assertThat(commitTimes().approximateNumEntries()).isEqualTo(1);
  }

  @Test
  void removingACursorTombstonesItsChangelog() {
    start(Map.of());
    cursors.pipeInput("bob", cursor("bob", "phone", 4), START);

    driver.advanceWallClockTime(DAY.multipliedBy(8));

    TestOutputTopic<Bytes, Long> changelog = driver.createOutputTopic(
        "im.inbox-store-" + InboxStoreTopology.CURSOR_STORE + "-changelog", Serdes.Bytes().deserializer(),
        VersionedValue.longSerde(InboxStoreTopology.CURSOR_STORE).deserializer());
    assertThat(changelog.readValuesToList()).containsExactly(4L, null);
  }

  @Test
  void everyCommitKeepsTheCursorAnotherRetentionEvenWhenItDoesNotMove() {
    start(Map.of());
    cursors.pipeInput("bob", cursor("bob", "phone", 4), START);
    cursors.pipeInput("bob", cursor("bob", "phone", 4), START.plus(DAY.multipliedBy(5)));
    // A late, older commit does not age it again
    cursors.pipeInput("bob", cursor("bob", "phone", 3), START.plus(DAY));

    driver.advanceWallClockTime(DAY.multipliedBy(8));
    assertThat(stored("phone")).isEqualTo(4);

    driver.advanceWallClockTime(DAY.multipliedBy(4));
    assertThat(stored("phone")).isEqualTo(Timelines.START);
  }

  @Test
  void aDeviceWhoseCursorWasRemovedSyncsExactlyWhatItHadNotSeen() {
    start(Map.of());
    inbox.pipeInput("bob", message("bob", "c1", "seen-0", START), START);
    inbox.pipeInput("bob", message("bob", "c1", "seen-1", START), START);
    cursors.pipeInput("bob", cursor("bob", "phone", 1), START);
    Instant later = START.plus(DAY.multipliedBy(3));
    inbox.pipeInput("bob", message("bob", "c1", "unseen", later), later);

    driver.advanceWallClockTime(DAY.multipliedBy(7).plus(SWEEP));

    assertThat(stored("phone")).as("removed").isEqualTo(Timelines.START);
    Page<InboxEntry> page = Timelines.after(StoreView.of(driver.getKeyValueStore(InboxStoreTopology.INBOX_STORE)),
        "bob", stored("phone"), 100);
    assertThat(page.entries()).extracting(e -> e.value().getBody()).containsExactly("unseen");
  }

  @Test
  void aCursorStoredBeforeCommitTimesWereKeptAgesFromTheFirstSweep() {
    start(Map.of());
    KeyValueStore<Bytes, Long> store = driver.getKeyValueStore(InboxStoreTopology.CURSOR_STORE);
    store.put(StoreKeys.cursor("bob", "phone"), 7L);

    driver.advanceWallClockTime(SWEEP);
    assertThat(stored("phone")).isEqualTo(7);
    assertThat(commitTimes().get(StoreKeys.cursor("bob", "phone")))
        .isEqualTo(START.plus(SWEEP).toEpochMilli());

    driver.advanceWallClockTime(DAY.multipliedBy(6));
    assertThat(stored("phone")).isEqualTo(7);
    driver.advanceWallClockTime(DAY.multipliedBy(2));
    assertThat(stored("phone")).isEqualTo(Timelines.START);
  }

  @Test
  void cursorsHaveTheirOwnRetentionAndAreKeptForeverWithAForeverInbox() {
    start(Map.of("IM_DEVICE_CURSOR_RETENTION", "2d"));
    cursors.pipeInput("bob", cursor("bob", "phone", 4), START);
    driver.advanceWallClockTime(DAY.multipliedBy(2).plus(SWEEP));
    assertThat(stored("phone")).isEqualTo(Timelines.START);
    driver.close();

    start(Map.of("IM_INBOX_RETENTION", "forever"));
    cursors.pipeInput("bob", cursor("bob", "phone", 4), START);
    driver.advanceWallClockTime(DAY.multipliedBy(400));
    assertThat(stored("phone")).isEqualTo(4);
  }

  private long stored(String device) {
    return Timelines.cursor(StoreView.of(driver.getKeyValueStore(InboxStoreTopology.CURSOR_STORE)), "bob", device);
  }

  private long cursorKeys() {
    KeyValueStore<Bytes, Long> store = driver.getKeyValueStore(InboxStoreTopology.CURSOR_STORE);
    return store.approximateNumEntries();
  }

  private KeyValueStore<Bytes, Long> commitTimes() {
    return driver.getKeyValueStore(InboxStoreTopology.CURSOR_COMMIT_STORE);
  }
}
