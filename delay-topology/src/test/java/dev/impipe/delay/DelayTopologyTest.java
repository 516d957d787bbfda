package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.test.TestRecord;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The production topology on a driven wall clock: when records come out, how often, in which order. */
class DelayTopologyTest {

  private static final String REGISTRY = "mock://delay-test";
  /** Mid-second on purpose: buckets are seconds, delivery must still never be early by a millisecond. */
  private static final Instant T0 = Instant.parse("2026-03-01T12:00:00.250Z");
  private static final Set<String> EXISTING = Set.of("im.messages", "im.inbox", "im.rejected", "im.delayed",
      "im.history");

  @TempDir
  Path stateDir;

  private final ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(REGISTRY));
  private SimpleMeterRegistry meters;
  private TopologyTestDriver driver;
  private TestInputTopic<String, ScheduleCommand> delayed;
  private TestOutputTopic<byte[], byte[]> messages;
  private TestOutputTopic<byte[], byte[]> inbox;
  private TestOutputTopic<byte[], byte[]> rejected;

  @BeforeEach
  void setUp() {
    meters = new SimpleMeterRegistry();
  }

  @AfterEach
  void tearDown() {
    if (driver != null) {
      driver.close();
    }
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  private void start(DelayConfig config) {
    driver = new TopologyTestDriver(DelayTopology.build(topics, config, EXISTING::contains,
        new DelayMetrics(meters)), StreamsTestConfig.forDriver("delay-test", topics.names(), stateDir), T0);
    delayed = driver.createInputTopic("im.delayed", new StringSerializer(),
        topics.delayed().valueSerde().serializer());
    messages = driver.createOutputTopic("im.messages", new ByteArrayDeserializer(), new ByteArrayDeserializer());
    inbox = driver.createOutputTopic("im.inbox", new ByteArrayDeserializer(), new ByteArrayDeserializer());
    rejected = driver.createOutputTopic("im.rejected", new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  private void start() {
    start(DelayConfig.defaults());
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  private static ScheduleCommand schedule(String id, Instant at, String topic, String key, String value) {
    return ScheduleCommand.newBuilder().setId(id).setOp(ScheduleOp.SCHEDULE).setDeliverAt(at)
        .setTargetTopic(topic).setKey(ByteBuffer.wrap(utf8(key))).setValue(ByteBuffer.wrap(utf8(value)))
        .setHeaders(Map.of("trace", ByteBuffer.wrap(utf8("t-" + id)))).build();
  }

  private static ScheduleCommand schedule(String id, Instant at) {
    return schedule(id, at, "im.messages", "conv-" + id, "value-" + id);
  }

  private static ScheduleCommand cancel(String id) {
    return ScheduleCommand.newBuilder().setId(id).setOp(ScheduleOp.CANCEL).setDeliverAt(T0).setHeaders(Map.of())
        .build();
  }

  private void send(ScheduleCommand command) {
    delayed.pipeInput(command.getId(), command, T0);
  }

  private void advance(Duration duration) {
    driver.advanceWallClockTime(duration);
  }

  private static String header(TestRecord<byte[], byte[]> record, String name) {
    Header header = record.headers().lastHeader(name);
    return header == null ? null : text(header.value());
  }

  /** key|value|scheduled-at of a delivered record, for exact comparisons. */
  private static String delivered(TestRecord<byte[], byte[]> record) {
    return text(record.key()) + "|" + text(record.value()) + "|" + header(record, DelayHeaders.SCHEDULED_AT);
  }

  private static String expected(String id, Instant at) {
    return "conv-" + id + "|value-" + id + "|" + at.toEpochMilli();
  }

  private double counter(String name, String... tags) {
    return meters.get(name).tags(tags).counter().count();
  }

  @Test
  void neverEarlyThenExactlyOnceWithKeyValueAndHeadersUnchanged() {
    start();
    // Given: now is 12:00:00.250; A is due at 12:00:02.750, half a second into its bucket
    Instant due = T0.plusMillis(2_500);
    send(schedule("a", due));

    // When: 12:00:01.250, a tick: not due
    advance(Duration.ofSeconds(1));
    // Then
    assertThat(messages.isEmpty()).isTrue();

    // When: 12:00:02.250, a tick in A's own bucket, but 500 ms before it: still not due
    advance(Duration.ofSeconds(1));
    assertThat(messages.isEmpty()).isTrue();

    // When: 12:00:03.250, the first tick after A's time
    advance(Duration.ofSeconds(1));
    // Then: A comes out once, as it was scheduled, plus the scheduled-at header, stamped with the delivery time
    TestRecord<byte[], byte[]> out = messages.readRecord();
    assertThat(delivered(out)).isEqualTo(expected("a", due));
    assertThat(header(out, "trace")).isEqualTo("t-a");
    assertThat(out.headers().toArray()).hasSize(2);
    assertThat(out.getRecordTime()).isEqualTo(T0.plusSeconds(3));
    assertThat(messages.isEmpty()).isTrue();

    // When: 12:00:08.250, five more ticks
    for (int i = 0; i < 5; i++) {
      advance(Duration.ofSeconds(1));
    }
    // Then: nothing is delivered twice
    assertThat(messages.isEmpty()).isTrue();
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(meters.get("im.delay.delivered").counter().count()).isEqualTo(1);
    assertThat(meters.get("im.delay.lateness").timer().max(TimeUnit.MILLISECONDS)).isEqualTo(500);
    assertThat(meters.get("im.delay.scheduled").gauge().value()).isZero();
  }

  @Test
  void recordsComeOutInDueOrderAcrossBucketsWhateverTheirIdsAndArrivalOrder() {
    start();
    // Given: now is 12:00:00.250; ids sort against due order, arrival order is mixed, two share a bucket
    send(schedule("a", T0.plusSeconds(5)));
    send(schedule("z", T0.plusSeconds(2)));
    send(schedule("c", T0.plusMillis(3_700)));
    send(schedule("m", T0.plusMillis(3_100)));
    send(schedule("b", T0.plusMillis(2_001)));

    // When: 12:00:10.250, one punctuation finds all five due
    advance(Duration.ofSeconds(10));

    // Then: due order, each once
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered).containsExactly(
        expected("z", T0.plusSeconds(2)), expected("b", T0.plusMillis(2_001)), expected("m", T0.plusMillis(3_100)),
        expected("c", T0.plusMillis(3_700)), expected("a", T0.plusSeconds(5)));
    assertThat(messages.isEmpty()).isTrue();
  }

  @Test
  void deliveryGoesToEachRecordsOwnTargetTopic() {
    start(DelayConfig.fromEnv(Map.of("IM_DELAY_TARGETS", "im.messages,im.inbox")));
    // Given: now is 12:00:00.250; one record for im.messages, one for im.inbox
    send(schedule("a", T0.plusSeconds(1), "im.messages", "conv-a", "value-a"));
    send(schedule("b", T0.plusSeconds(1), "im.inbox", "user-b", "entry-b"));

    // When: 12:00:02.250
    advance(Duration.ofSeconds(2));

    // Then
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("a", T0.plusSeconds(1)));
    assertThat(inbox.readRecordsToList()).map(r -> text(r.key()) + "|" + text(r.value()))
        .containsExactly("user-b|entry-b");
    assertThat(messages.isEmpty()).isTrue();
    assertThat(inbox.isEmpty()).isTrue();
  }

  @Test
  void cancelBeforeDueRemovesOnlyThatSchedule() {
    start();
    // Given: now is 12:00:00.250; A and B both due at 12:00:03.250
    send(schedule("a", T0.plusSeconds(3)));
    send(schedule("b", T0.plusSeconds(3)));

    // When: 12:00:01.250, A is cancelled
    advance(Duration.ofSeconds(1));
    send(cancel("a"));
    // ... and 12:00:05.250 passes
    advance(Duration.ofSeconds(4));

    // Then: only B arrives
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("b", T0.plusSeconds(3)));
    assertThat(messages.isEmpty()).isTrue();
    assertThat(counter("im.delay.cancels", "result", "removed")).isEqualTo(1);
    assertThat(counter("im.delay.cancels", "result", "noop")).isZero();
  }

  @Test
  void cancelAfterDeliveryOrOfAnUnknownIdIsACountedNoOp() {
    start();
    // Given: now is 12:00:00.250; A is due at 12:00:01.250
    send(schedule("a", T0.plusSeconds(1)));
    // When: 12:00:02.250, A is delivered
    advance(Duration.ofSeconds(2));
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("a", T0.plusSeconds(1)));

    // When: A is cancelled after the fact, and X was never scheduled
    send(cancel("a"));
    send(cancel("x"));
    // ... and 12:00:04.250 passes
    advance(Duration.ofSeconds(2));

    // Then: nothing happens, nothing is rejected, both no-ops are counted
    assertThat(messages.isEmpty()).isTrue();
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(counter("im.delay.cancels", "result", "noop")).isEqualTo(2);
    assertThat(counter("im.delay.cancels", "result", "removed")).isZero();
  }

  @Test
  void aRescheduleOfTheSameIdReplacesTheEarlierOne() {
    start();
    // Given: now is 12:00:00.250; A is due at 12:00:05.250, then rescheduled for 12:00:02.250
    send(schedule("a", T0.plusSeconds(5)));
    send(schedule("a", T0.plusSeconds(2), "im.messages", "conv-a", "value-a2"));

    // When: 12:00:10.250
    advance(Duration.ofSeconds(3));
    advance(Duration.ofSeconds(7));

    // Then: one delivery, at the new time, with the new value
    assertThat(messages.readRecordsToList()).map(r -> text(r.value()) + "|" + header(r, DelayHeaders.SCHEDULED_AT))
        .containsExactly("value-a2|" + T0.plusSeconds(2).toEpochMilli());
    assertThat(messages.isEmpty()).isTrue();
  }

  @Test
  void aRecordPastDueOnArrivalGoesOutOnTheNextPunctuation() {
    start();
    // Given: 12:00:03.250, the sweeps have moved on
    advance(Duration.ofSeconds(3));
    // When: a record arrives that was due ten minutes ago
    Instant due = T0.minus(Duration.ofMinutes(10));
    send(schedule("late", due));
    // Then: not before the next punctuation
    assertThat(messages.isEmpty()).isTrue();

    // When: 12:00:04.250, the next tick
    advance(Duration.ofSeconds(1));
    // Then: delivered, carrying its original scheduled time; lateness counts from it
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered).containsExactly(expected("late", due));
    assertThat(messages.isEmpty()).isTrue();
    assertThat(meters.get("im.delay.lateness").timer().max(TimeUnit.SECONDS)).isEqualTo(604);
  }

  @Test
  void beyondTheMaximumDelayIsRejectedWithItsOriginalBytesAndHeaders() {
    start();
    // Given: now is 12:00:00.250; the maximum delay is two years (730 days)
    ScheduleCommand tooFar = schedule("far", T0.plus(Duration.ofDays(730)).plusSeconds(1));
    ScheduleCommand justInside = schedule("near", T0.plus(Duration.ofDays(730)));
    byte[] tooFarBytes = topics.delayed().valueSerde().serializer().serialize("im.delayed", tooFar);

    // When: both arrive, the rejected one with a header of its own
    RecordHeaders sourceHeaders = new RecordHeaders();
    sourceHeaders.add("origin", utf8("api"));
    delayed.pipeInput(new TestRecord<>("far", tooFar, sourceHeaders, T0));
    send(justInside);

    // Then: the far one is rejected at once, as it came, with a reason
    TestRecord<byte[], byte[]> out = rejected.readRecord();
    assertThat(text(out.key())).isEqualTo("far");
    assertThat(out.value()).isEqualTo(tooFarBytes);
    assertThat(header(out, "origin")).isEqualTo("api");
    assertThat(header(out, RejectedHeaders.MESSAGE)).contains("maximum delay").contains("PT17520H");
    assertThat(header(out, RejectedHeaders.SOURCE)).isEqualTo("delay");
    assertThat(header(out, RejectedHeaders.TOPIC)).isEqualTo("im.delayed");
    assertThat(header(out, RejectedHeaders.PARTITION)).isEqualTo("0");
    assertThat(header(out, RejectedHeaders.OFFSET)).isEqualTo("0");
    assertThat(header(out, RejectedHeaders.CODE)).isEqualTo("MAX_DELAY");
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(counter("im.delay.rejected", "reason", "max-delay")).isEqualTo(1);
    // ... and the one exactly at the maximum is held, not delivered
    advance(Duration.ofSeconds(5));
    assertThat(messages.isEmpty()).isTrue();
    assertThat(meters.get("im.delay.scheduled").gauge().value()).isEqualTo(1);
  }

  @Test
  void unknownOrDisallowedTargetTopicsAreRejectedNotACrash() {
    // Every topic allowed by configuration: internal ones and the delayed topic still are not.
    start(DelayConfig.fromEnv(Map.of("IM_DELAY_TARGETS", "*")));
    // Given: now is 12:00:00.250
    // When: schedules name a missing topic, an internal topic, the delayed topic itself, and no topic
    send(schedule("missing", T0.plusSeconds(1), "im.nope", "k", "v"));
    send(schedule("internal", T0.plusSeconds(1), "__consumer_offsets", "k", "v"));
    send(schedule("loop", T0.plusSeconds(1), "im.delayed", "k", "v"));
    send(ScheduleCommand.newBuilder(schedule("none", T0.plusSeconds(1))).setTargetTopic(null).build());
    // ... then a good one, and 12:00:02.250 passes
    send(schedule("good", T0.plusSeconds(1)));
    advance(Duration.ofSeconds(2));

    // Then: four rejections with reasons, the good one delivered
    assertThat(rejected.readRecordsToList()).map(r -> text(r.key()) + ": " + header(r, RejectedHeaders.MESSAGE))
        .containsExactly(
            "missing: target topic 'im.nope' does not exist",
            "internal: target topic '__consumer_offsets' is not allowed",
            "loop: target topic 'im.delayed' is not allowed",
            "none: no target topic");
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("good", T0.plusSeconds(1)));
    assertThat(messages.isEmpty()).isTrue();
    assertThat(counter("im.delay.rejected", "reason", "target")).isEqualTo(4);
  }

  @Test
  void byDefaultOnlyTheMessagesTopicMayBeTargeted() {
    start();
    // Given: the default allow-list; now is 12:00:00.250
    // When: schedules for im.messages, im.inbox and im.history (all exist); 12:00:02.250 passes
    send(schedule("ok", T0.plusSeconds(1)));
    send(schedule("inbox", T0.plusSeconds(1), "im.inbox", "k", "v"));
    send(schedule("history", T0.plusSeconds(1), "im.history", "k", "v"));
    advance(Duration.ofSeconds(2));

    // Then: only the messages topic got its record; the others are rejected with the reason
    assertThat(rejected.readRecordsToList()).map(r -> text(r.key()) + ": " + header(r, RejectedHeaders.MESSAGE))
        .containsExactly("inbox: target topic 'im.inbox' is not allowed",
            "history: target topic 'im.history' is not allowed");
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("ok", T0.plusSeconds(1)));
    assertThat(inbox.isEmpty()).isTrue();
  }

  @Test
  void targetsOutsideTheConfiguredAllowListAreRejected() {
    start(DelayConfig.fromEnv(Map.of("IM_DELAY_TARGETS", "im.mess*")));
    // Given: only im.mess* may be targeted; now is 12:00:00.250
    // When: one schedule each for im.messages and im.inbox (both exist); 12:00:02.250 passes
    send(schedule("ok", T0.plusSeconds(1)));
    send(schedule("no", T0.plusSeconds(1), "im.inbox", "k", "v"));
    advance(Duration.ofSeconds(2));

    // Then
    assertThat(rejected.readRecordsToList()).map(r -> header(r, RejectedHeaders.MESSAGE))
        .containsExactly("target topic 'im.inbox' is not allowed");
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("ok", T0.plusSeconds(1)));
    assertThat(inbox.isEmpty()).isTrue();
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(messages.isEmpty()).isTrue();
  }

  @Test
  void malformedCommandsAreRejectedAsTheyCame() {
    start();
    TestInputTopic<byte[], byte[]> raw = driver.createInputTopic("im.delayed", new ByteArraySerializer(),
        new ByteArraySerializer());
    byte[] mismatched = topics.delayed().valueSerde().serializer().serialize("im.delayed",
        schedule("other", T0.plusSeconds(1)));
    // Given: now is 12:00:00.250
    // When: garbage, a key that is not the command's id, a command without key, a null value
    raw.pipeInput(utf8("g"), new byte[] {1, 2, 3}, T0);
    raw.pipeInput(utf8("mine"), mismatched, T0);
    raw.pipeInput(null, mismatched, T0);
    raw.pipeInput(utf8("tomb"), null, T0);
    advance(Duration.ofSeconds(2));

    // Then: each rejected with its original bytes and a reason; nothing is delivered
    List<TestRecord<byte[], byte[]>> out = rejected.readRecordsToList();
    assertThat(out).map(r -> text(r.key())).containsExactly("g", "mine", null, "tomb");
    assertThat(out.get(0).value()).containsExactly(1, 2, 3);
    assertThat(out.get(1).value()).isEqualTo(mismatched);
    assertThat(out).map(r -> header(r, RejectedHeaders.MESSAGE)).satisfiesExactly(
        r -> assertThat(r).startsWith("undecodable schedule command"),
        r -> assertThat(r).isEqualTo("key 'mine' does not match schedule id 'other'"),
        r -> assertThat(r).startsWith("missing key"),
        r -> assertThat(r).startsWith("no schedule command"));
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(messages.isEmpty()).isTrue();
    assertThat(counter("im.delay.rejected", "reason", "invalid")).isEqualTo(4);
  }

  @Test
  void afterDowntimeEveryOverdueRecordIsDeliveredInBoundedBatches() {
    // Given: batches of 3, drained every 20 ms while a backlog remains; now is 12:00:00.250
    start(DelayConfig.defaults().withBatch(3, 20));
    for (int i = 0; i < 7; i++) {
      send(schedule("r" + i, T0.plusSeconds(1 + i)));
    }

    // When: an hour passes without a single punctuation (the app was down), then one tick: 13:00:00.250
    advance(Duration.ofHours(1));
    // Then: the oldest three, no more
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered).containsExactly(
        expected("r0", T0.plusSeconds(1)), expected("r1", T0.plusSeconds(2)), expected("r2", T0.plusSeconds(3)));
    assertThat(meters.get("im.delay.due.backlog").gauge().value()).isEqualTo(4);

    // When: 13:00:00.270, the drain punctuator
    advance(Duration.ofMillis(20));
    // Then: the next three
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered).containsExactly(
        expected("r3", T0.plusSeconds(4)), expected("r4", T0.plusSeconds(5)), expected("r5", T0.plusSeconds(6)));
    assertThat(meters.get("im.delay.due.backlog").gauge().value()).isEqualTo(1);

    // When: 13:00:00.290, the drain punctuator again
    advance(Duration.ofMillis(20));
    // Then: the last one; the backlog is gone
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("r6", T0.plusSeconds(7)));
    assertThat(meters.get("im.delay.due.backlog").gauge().value()).isZero();

    // When: 13:00:02.250, more drain and regular ticks
    advance(Duration.ofMillis(20));
    advance(Duration.ofMillis(1_940));
    // Then: nothing more, and no punctuation ever delivered more than a batch
    assertThat(messages.isEmpty()).isTrue();
    assertThat(meters.get("im.delay.punctuation.records").summary().max()).isEqualTo(3);
    assertThat(meters.get("im.delay.delivered").counter().count()).isEqualTo(7);
    // ... seven records over the two seconds since the first punctuation
    assertThat(meters.get("im.delay.drain.rate").gauge().value()).isEqualTo(3.5);
  }

  @Test
  void aBurstDueInOneMillisecondDrainsBatchByBatchAndLateArrivalsJoinIt() {
    // Given: batches of 2; four records due in the same millisecond, 12:00:01.250; now is 12:00:00.250
    start(DelayConfig.defaults().withBatch(2, 20));
    for (String id : List.of("h", "d", "f", "b")) {
      send(schedule(id, T0.plusSeconds(1)));
    }

    // When: 12:00:02.250, a tick
    advance(Duration.ofSeconds(2));
    // Then: the first batch, in id order within the millisecond
    assertThat(messages.readRecordsToList()).map(r -> text(r.key())).containsExactly("conv-b", "conv-d");

    // When: mid-drain, A arrives due in that same millisecond (its id sorts before the last one delivered) and C
    // arrives five seconds overdue
    send(schedule("a", T0.plusSeconds(1)));
    send(schedule("c", T0.minusSeconds(5)));
    // ... 12:00:02.270, the drain punctuator
    advance(Duration.ofMillis(20));
    // Then: the rest of the burst
    assertThat(messages.readRecordsToList()).map(r -> text(r.key())).containsExactly("conv-f", "conv-h");

    // When: 12:00:02.290, the drain punctuator again
    advance(Duration.ofMillis(20));
    // Then: the late arrivals, none skipped, with their own scheduled times
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("a", T0.plusSeconds(1)), expected("c", T0.minusSeconds(5)));

    // When: 12:00:04.250
    advance(Duration.ofMillis(1_960));
    // Then: nothing twice
    assertThat(messages.isEmpty()).isTrue();
    assertThat(meters.get("im.delay.delivered").counter().count()).isEqualTo(6);
  }

  @Test
  void aDeliveryWritesItsOutputAndNoTombstoneAndDeliveredSegmentsAreDroppedWhole() {
    // Given: one-minute segments; 100 schedules due at 12:00:01.250 and one due at 12:05:00.250
    start(DelayConfig.defaults().withSegment(60_000));
    for (int i = 0; i < 100; i++) {
      send(schedule("r" + i, T0.plusSeconds(1)));
    }
    send(schedule("later", T0.plusSeconds(300)));
    TestOutputTopic<byte[], byte[]> scheduleLog = changelog(DelayTopology.SCHEDULE_STORE);
    TestOutputTopic<byte[], byte[]> indexLog = changelog(DelayTopology.INDEX_STORE);
    assertThat(scheduleLog.readRecordsToList()).hasSize(101);
    assertThat(indexLog.readRecordsToList()).hasSize(101);

    // When: 12:00:02.250, the hundred are delivered
    advance(Duration.ofSeconds(2));
    // Then: a hundred outputs, and only the sweep position in each changelog (no tombstone per delivery)
    assertThat(messages.readRecordsToList()).hasSize(100);
    assertThat(scheduleLog.readRecordsToList()).singleElement().satisfies(r -> assertThat(r.value()).isNotNull());
    assertThat(indexLog.readRecordsToList()).singleElement().satisfies(r -> assertThat(r.value()).isNotNull());
    // ... the delivered entries are still on disk in their segment, but count as gone: a re-schedule of r1 is new
    assertThat(storedIds()).contains("r0", "r99", "later");

    // When: 12:02:02.250, the sweep is two segments further on
    advance(Duration.ofMinutes(2));
    // Then: the delivered segment was dropped whole; the undelivered one is kept
    assertThat(storedIds()).containsExactly("later");
    assertThat(messages.isEmpty()).isTrue();

    // When: 12:05:00.250 passes
    advance(Duration.ofMinutes(3));
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("later", T0.plusSeconds(300)));
  }

  @Test
  void aDeliveredIdCanBeScheduledAgainAndCancelledExactly() {
    start();
    // Given: A delivered at 12:00:01.250
    send(schedule("a", T0.plusSeconds(1)));
    advance(Duration.ofSeconds(2));
    assertThat(messages.readRecordsToList()).hasSize(1);

    // When: A is scheduled again (12:00:05.250), a CANCEL of it arrives, and it is scheduled a third time
    delayed.pipeInput("a", schedule("a", T0.plusSeconds(5)), T0.plusSeconds(2));
    delayed.pipeInput("a", cancel("a"), T0.plusSeconds(2));
    delayed.pipeInput("a", schedule("a", T0.plusSeconds(6)), T0.plusSeconds(2));
    advance(Duration.ofSeconds(10));

    // Then: the first was new (not a replace of the delivered one), the cancel removed it, the third is delivered
    assertThat(messages.readRecordsToList()).map(DelayTopologyTest::delivered)
        .containsExactly(expected("a", T0.plusSeconds(6)));
    assertThat(counter("im.delay.cancels", "result", "removed")).isEqualTo(1);
    assertThat(meters.get("im.delay.scheduled").gauge().value()).isZero();
  }

  @Test
  void aStoredEntryThatCannotBeDecodedIsQuarantinedWithItsBytesAndTheRestIsDelivered() {
    start();
    // Given: A and C due at 12:00:01.250, and between them a stored entry B whose bytes are not a schedule
    send(schedule("a", T0.plusSeconds(1)));
    send(schedule("c", T0.plusSeconds(1)));
    long due = T0.plusSeconds(1).toEpochMilli();
    WindowStore<Bytes, byte[]> store = driver.getWindowStore(DelayTopology.SCHEDULE_STORE);
    store.put(Bytes.wrap(dev.impipe.delay.internal.ScheduleCodec.scheduleKey(due, utf8("b"))), utf8("garbage"), due);

    // When: 12:00:02.250, and again a tick later
    advance(Duration.ofSeconds(2));
    advance(Duration.ofSeconds(1));

    // Then: A and C are delivered once, B goes to the rejected topic once, with its stored bytes and its id
    assertThat(messages.readRecordsToList()).map(r -> text(r.key())).containsExactly("conv-a", "conv-c");
    assertThat(rejected.readRecordsToList()).singleElement().satisfies(r -> {
      assertThat(text(r.key())).isEqualTo("b");
      assertThat(text(r.value())).isEqualTo("garbage");
      assertThat(header(r, DelayHeaders.SCHEDULE_ID)).isEqualTo("b");
      assertThat(header(r, RejectedHeaders.MESSAGE)).contains("does not decode");
      assertThat(header(r, RejectedHeaders.CODE)).isEqualTo("UNDECODABLE");
      assertThat(header(r, RejectedHeaders.STORE)).isEqualTo(DelayTopology.SCHEDULE_STORE);
    });
    assertThat(counter("im.delay.rejected", "reason", "undecodable")).isEqualTo(1);
  }

  private TestOutputTopic<byte[], byte[]> changelog(String store) {
    return driver.createOutputTopic("im.delay-test-" + store + "-changelog", new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
  }

  private List<String> storedIds() {
    WindowStore<Bytes, byte[]> store = driver.getWindowStore(DelayTopology.SCHEDULE_STORE);
    List<String> ids = new java.util.ArrayList<>();
    try (var all = store.all()) {
      all.forEachRemaining(kv -> {
        byte[] key = kv.key.key().get();
        if (key[0] != -1) {
          ids.add(text(dev.impipe.delay.internal.ScheduleCodec.idOf(key)));
        }
      });
    }
    return ids;
  }

  @Test
  void theIngestHelperSchedulesAChatMessageForItsConversationAndCancelsIt() {
    start();
    ScheduledMessages helper = new ScheduledMessages(topics);
    ChatMessage message = ChatMessage.newBuilder().setMessageId("m-1").setClientMsgId("c-1")
        .setConversationId("d:alice:bob").setConversationType(ConversationType.DIRECT).setType(MessageType.MESSAGE)
        .setSenderId("alice").setRecipientId("bob").setBody("later").setSentAt(T0).build();
    ChatMessage other = ChatMessage.newBuilder(message).setMessageId("m-2").setBody("never").build();
    // Given: now is 12:00:00.250; two messages scheduled for 12:00:02.250 through the helper, the second cancelled
    for (ScheduleCommand command : List.of(helper.schedule(message, T0.plusSeconds(2)),
        helper.schedule(other, T0.plusSeconds(2)), helper.cancel("m-2", T0))) {
      var record = helper.record(command);
      assertThat(record.topic()).isEqualTo("im.delayed");
      delayed.pipeInput(record.key(), record.value(), T0);
    }

    // When: 12:00:03.250
    advance(Duration.ofSeconds(3));

    // Then: the first message arrives in im.messages, keyed by its conversation, readable with the topic's serde
    TestRecord<byte[], byte[]> out = messages.readRecord();
    assertThat(text(out.key())).isEqualTo("d:alice:bob");
    assertThat(topics.messages().valueSerde().deserializer().deserialize("im.messages", out.value()))
        .isEqualTo(message);
    assertThat(messages.isEmpty()).isTrue();
  }
}
