package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.avro.Ack;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.Delivery;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import dev.impipe.testkit.StreamsTestConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wheel's per-device layout driven through the topology: ranges, ACKs and redeliveries inside a run, a restart
 * mid-wheel, the per-device bound, the store names. Default wheel: 1 s tick (250 ms slots), 15 s timeout.
 */
class AckWheelDeviceLayoutTest {

  private static final String REGISTRY = "mock://ack-wheel-layout-test";
  private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

  @TempDir
  Path stateDir;

  private final ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(REGISTRY));
  private TopologyTestDriver driver;
  private TestInputTopic<String, Delivery> deliveries;
  private TestInputTopic<String, Ack> acks;
  private TestOutputTopic<String, AckTimeout> timeouts;
  private TestOutputTopic<byte[], byte[]> rejected;
  private Instant clock = T0;
  private int drivers;

  @AfterEach
  void close() {
    if (driver != null) {
      driver.close();
    }
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  private void start(AckTimeoutConfig config) {
    driver = new TopologyTestDriver(AckWheelTopology.build(topics, config),
        StreamsTestConfig.forDriver("ack-wheel-layout", topics.names(), stateDir.resolve("d" + drivers++)), clock);
    deliveries = driver.createInputTopic(topics.deliveries().name(), topics.deliveries().keySerde().serializer(),
        topics.deliveries().valueSerde().serializer());
    acks = driver.createInputTopic(topics.acks().name(), topics.acks().keySerde().serializer(),
        topics.acks().valueSerde().serializer());
    timeouts = driver.createOutputTopic(topics.ackTimeouts().name(), topics.ackTimeouts().keySerde().deserializer(),
        topics.ackTimeouts().valueSerde().deserializer());
    rejected = driver.createOutputTopic(topics.rejected().name(), topics.rejected().keySerde().deserializer(),
        topics.rejected().valueSerde().deserializer());
  }

  @Test
  void aRangeIsOneRecordOfTheDeviceAndOneSlotKey() {
    // Given the default wheel
    start(AckTimeoutConfig.defaults());
    // When one Delivery covers 11..15 of alice's phone (pushed at 1.05 s), and 16 follows alone in the same slot
    push("alice", "phone", 11, 15L, at(1_050), 1);
    push("alice", "phone", 16, null, at(1_100), 1);
    // Then the device has one record with one run, filed under one slot
    assertThat(storeSize(AckWheelTopology.DEVICE_STORE)).isEqualTo(1);
    assertThat(storeSize(AckWheelTopology.SLOT_STORE)).isEqualTo(1);
    assertThat(device("alice", "phone").runs()).containsExactly(
        new DeviceTimers.Run(11, 16, slot(16_050), t(1_050), t(16_050), t(16_100), 1));
    // and at the slot's end (16.25 s) one AckTimeout lists every seq
    advanceTo(16_250);
    assertThat(timeouts.readRecordsToList()).extracting(TestRecord::value).containsExactly(
        timeout("alice", "phone", List.of(11L, 12L, 13L, 14L, 15L, 16L), 1_050, 16_050, 1));
    assertThat(storeSize(AckWheelTopology.SLOT_STORE)).isZero();
    assertThat(storeSize(AckWheelTopology.DEVICE_STORE)).as("nothing pending, never ACKed: gone").isZero();
  }

  @Test
  void anAckInsideARunClearsItsPrefixAndTheRestTimesOut() {
    start(AckTimeoutConfig.defaults());
    push("alice", "phone", 1, 10L, at(500), 1);
    advanceTo(2_000);
    ack("alice", "phone", 6, at(2_000));
    advanceTo(16_000);
    assertThat(timeouts.readRecordsToList()).extracting(TestRecord::value).containsExactly(
        timeout("alice", "phone", List.of(7L, 8L, 9L, 10L), 500, 15_500, 1));
    // The record stays for the ACK (a late Delivery of 1..6 is still ignored), with nothing pending
    push("alice", "phone", 3, 6L, at(500), 1);
    assertThat(device("alice", "phone").runs()).isEmpty();
    assertThat(device("alice", "phone").ackedSeq()).isEqualTo(6);
    assertThat(storeSize(AckWheelTopology.SLOT_STORE)).isZero();
  }

  @Test
  void aRedeliveryOfARunWaitsAFullTimeoutAgainAndKeepsItsFirstPush() {
    // Given 2 attempts per seq and 1..3 pushed at 0.5 s
    start(AckTimeoutConfig.defaults().withMaxAttempts(2));
    push("alice", "phone", 1, 3L, at(500), 1);
    // When the first deadline passes (16 s): a redelivery request for the run
    advanceTo(16_000);
    List<TestRecord<String, AckTimeout>> first = timeouts.readRecordsToList();
    assertThat(first).extracting(TestRecord::value).containsExactly(
        timeout("alice", "phone", List.of(1L, 2L, 3L), 500, 15_500, 1));
    assertThat(first.get(0).headers().lastHeader(AckWheelTopology.FINAL_HEADER).value())
        .isEqualTo("false".getBytes(StandardCharsets.UTF_8));
    // and the gateway pushes 2..3 again at 17 s (attempt 2); the device ACKs 1
    advanceTo(17_000);
    push("alice", "phone", 2, 3L, at(17_000), 2);
    ack("alice", "phone", 1, at(17_000));
    // Then 2..3 time out for good at the end of the new deadline's slot (32 s), with the first push kept
    advanceTo(31_750);
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(32_000);
    assertThat(timeouts.readRecordsToList()).extracting(TestRecord::value).containsExactly(
        timeout("alice", "phone", List.of(2L, 3L), 500, 32_000, 2));
    advanceTo(60_000);
    assertThat(timeouts.isEmpty()).isTrue();
  }

  @Test
  void aRestartMidWheelFiresEveryPendingSeqOnceNeverEarly() {
    // Given pushes to two devices and an ACK, then the app stops at 5 s
    start(AckTimeoutConfig.defaults());
    push("bob", "phone", 101, 103L, at(2_100), 1);
    push("carol", "phone", 7, null, at(2_400), 1);
    advanceTo(5_000);
    ack("bob", "phone", 102, at(5_000));
    List<KeyValue<Bytes, byte[]>> devices = contents(AckWheelTopology.DEVICE_STORE);
    List<KeyValue<Bytes, byte[]>> slots = contents(AckWheelTopology.SLOT_STORE);
    driver.close();

    // When it starts again at 10 s with the stores as restored from their changelogs (a new processor: no cursor,
    // no marks)
    clock = at(10_000);
    start(AckTimeoutConfig.defaults());
    KeyValueStore<Bytes, byte[]> deviceStore = driver.getKeyValueStore(AckWheelTopology.DEVICE_STORE);
    KeyValueStore<Bytes, byte[]> slotStore = driver.getKeyValueStore(AckWheelTopology.SLOT_STORE);
    devices.forEach(kv -> deviceStore.put(kv.key, kv.value));
    slots.forEach(kv -> slotStore.put(kv.key, kv.value));

    // Then nothing before the deadlines' slots; 103 at 17.25 s, carol's 7 at 17.5 s; each once
    advanceTo(17_000);
    assertThat(timeouts.isEmpty()).isTrue();
    advanceTo(17_250);
    assertThat(timeouts.readRecordsToList()).extracting(TestRecord::value).containsExactly(
        timeout("bob", "phone", List.of(103L), 2_100, 17_100, 1));
    advanceTo(17_500);
    assertThat(timeouts.readRecordsToList()).extracting(TestRecord::value).containsExactly(
        timeout("carol", "phone", List.of(7L), 2_400, 17_400, 1));
    advanceTo(60_000);
    assertThat(timeouts.isEmpty()).isTrue();
  }

  @Test
  void aDeliveryBeyondTheDevicesBoundGoesToTheRejectedTopicAndTheRestStays() {
    // Given at most 3 pending seqs per device, and 1..3 pending
    start(AckTimeoutConfig.defaults().withMaxPendingPerDevice(3));
    push("alice", "phone", 1, 3L, at(100), 1);
    // When 4 comes, and a range longer than the bound, and an empty range
    push("alice", "phone", 4, null, at(200), 1);
    push("alice", "tablet", 1, 4L, at(200), 1);
    push("alice", "tablet", 5, 4L, at(200), 1);
    // Then all three are rejected with a reason; 1..3 time out as before
    List<TestRecord<byte[], byte[]>> bad = rejected.readRecordsToList();
    assertThat(bad).hasSize(3);
    assertThat(new String(bad.get(0).headers().lastHeader(RejectedHeaders.MESSAGE).value(), StandardCharsets.UTF_8))
        .contains("IM_ACK_MAX_PENDING_PER_DEVICE=3");
    assertThat(new String(bad.get(2).headers().lastHeader(RejectedHeaders.MESSAGE).value(), StandardCharsets.UTF_8))
        .contains("5..4");
    advanceTo(16_000);
    assertThat(timeouts.readRecordsToList()).extracting(TestRecord::value).containsExactly(
        timeout("alice", "phone", List.of(1L, 2L, 3L), 100, 15_100, 1));
  }

  @Test
  void withTheRecordCacheTheWheelBehavesTheSame() {
    start(AckTimeoutConfig.defaults().withStoreCache(true));
    push("alice", "phone", 1, 2L, at(100), 1);
    ack("alice", "phone", 1, at(200));
    advanceTo(16_000);
    assertThat(timeouts.readRecordsToList()).extracting(TestRecord::value).containsExactly(
        timeout("alice", "phone", List.of(2L), 100, 15_100, 1));
  }

  @Test
  void theStoresOfThePerSeqLayoutAreGone() {
    start(AckTimeoutConfig.defaults());
    assertThat(driver.getAllStateStores()).containsOnlyKeys(AckWheelTopology.DEVICE_STORE,
        AckWheelTopology.SLOT_STORE);
    assertThat(AckWheelTopology.RETIRED_STORES).doesNotContain(AckWheelTopology.DEVICE_STORE,
        AckWheelTopology.SLOT_STORE);
  }

  // --- helpers ---

  private static Instant at(long millisAfterT0) {
    return T0.plusMillis(millisAfterT0);
  }

  private static long t(long millisAfterT0) {
    return at(millisAfterT0).toEpochMilli();
  }

  private static long slot(long deadlineAfterT0) {
    return WheelRules.slotOf(t(deadlineAfterT0), 250);
  }

  private void advanceTo(long millisAfterT0) {
    driver.advanceWallClockTime(Duration.between(clock, at(millisAfterT0)));
    clock = at(millisAfterT0);
  }

  private void push(String user, String device, long seq, Long toSeq, Instant pushedAt, int attempt) {
    deliveries.pipeInput(user, Delivery.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq).setToSeq(toSeq)
        .setPushedAt(pushedAt).setAttempt(attempt).build(), pushedAt);
  }

  private void ack(String user, String device, long seq, Instant ackedAt) {
    acks.pipeInput(user, Ack.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq).setAckedAt(ackedAt)
        .build(), ackedAt);
  }

  private static AckTimeout timeout(String user, String device, List<Long> seqs, long firstPushedAt, long deadline,
      int attempts) {
    return AckTimeout.newBuilder().setUserId(user).setDeviceId(device).setSeqs(seqs)
        .setFirstPushedAt(at(firstPushedAt)).setDeadline(at(deadline)).setAttempts(attempts).build();
  }

  private DeviceTimers device(String user, String device) {
    KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(AckWheelTopology.DEVICE_STORE);
    return WheelCodec.decodeDevice(store.get(Bytes.wrap(WheelCodec.device(user, device))), Long.MAX_VALUE);
  }

  private List<KeyValue<Bytes, byte[]>> contents(String name) {
    List<KeyValue<Bytes, byte[]>> out = new ArrayList<>();
    KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(name);
    try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  private long storeSize(String name) {
    return contents(name).size();
  }
}
