package dev.impipe.delay.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.delay.DelayConfig;
import dev.impipe.delay.DelayHeaders;
import dev.impipe.delay.DelayMetrics;
import dev.impipe.delay.DelayTopology;
import dev.impipe.delay.TargetTopics;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.MockProcessorContext.CapturedForward;
import org.apache.kafka.streams.processor.api.MockProcessorContext.CapturedPunctuator;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The delay processor alone, on a mock context with in-memory stores and punctuators called by hand: the rules of
 * one sweep (the due boundary, the commit, the position record, the drain, cancels) at unit
 * speed. {@code DelayTopologyTest} checks the same processor end to end on the production topology.
 */
class DelayProcessorTest {

  private static final String REGISTRY = "mock://delay-processor-test";
  /** Mid-second on purpose: delivery must never be early by a millisecond. */
  private static final long T0 = Instant.parse("2026-03-01T12:00:00.250Z").toEpochMilli();
  private static final DelayProcessor.StoreNames STORES =
      new DelayProcessor.StoreNames("schedule", "index");

  private final ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(REGISTRY));
  private final Set<String> existing = new HashSet<>(Set.of("im.messages", "im.inbox"));
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final DelayMetrics metrics = new DelayMetrics(meters);
  /** The budget's clock stands still: only the record limit ends a round. */
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final List<Task> tasks = new ArrayList<>();
  private DelayConfig config = DelayConfig.defaults();
  private SweepBudget budget;
  private Task task;

  @AfterEach
  void tearDown() {
    tasks.forEach(t -> t.stores.forEach(s -> s.close()));
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  /** One task: its context, stores and processor. */
  private final class Task {
    final MockProcessorContext<byte[], Outgoing> context;
    final WindowStore<Bytes, byte[]> schedule;
    final WindowStore<Bytes, byte[]> index;
    final List<org.apache.kafka.streams.processor.StateStore> stores;
    DelayProcessor processor;
    /** Index of the current instance's regular punctuator (a restart schedules another). */
    int main;

    Task(int partition) {
      context = new MockProcessorContext<>(StreamsTestConfig.forDriver("delay-processor-test"),
          new TaskId(0, partition), null);
      schedule = windowStore(STORES.schedule());
      index = windowStore(STORES.index());
      stores = List.of(schedule, index);
    }

    private WindowStore<Bytes, byte[]> windowStore(String name) {
      WindowStore<Bytes, byte[]> store = Stores.windowStoreBuilder(Stores.inMemoryWindowStore(name,
          Duration.ofMillis(DelayTopology.STORE_RETENTION_MS), Duration.ofMillis(1), false), Serdes.Bytes(),
          Serdes.ByteArray()).withLoggingDisabled().withCachingDisabled().build();
      store.init(context.getStateStoreContext(), store);
      context.addStateStore(store);
      return store;
    }

    /** A new processor instance on this task's stores, as after a restart. */
    Task start() {
      context.setCurrentSystemTimeMs(T0);
      main = context.scheduledPunctuators().size();
      processor = new DelayProcessor("im.delayed", "im.rejected", STORES, config,
          new TargetTopics(config, TopicNames.withPrefix("im."), existing::contains), metrics,
          topics.delayed().valueSerde().deserializer(), CancelRefusals.NONE, () -> budget);
      processor.init(context);
      return this;
    }

    void send(ScheduleCommand command) {
      processor.process(new Record<>(utf8(command.getId()), topics.delayed().valueSerde().serializer()
          .serialize("im.delayed", command), T0));
    }

    /** The regular punctuation at wall-clock {@code now}. */
    void tick(long now) {
      mainPunctuator().getPunctuator().punctuate(now);
    }

    CapturedPunctuator mainPunctuator() {
      return context.scheduledPunctuators().get(main);
    }

    /** The drain punctuators scheduled so far (all but the regular one), oldest first. */
    List<CapturedPunctuator> drains() {
      return context.scheduledPunctuators().subList(main + 1, context.scheduledPunctuators().size());
    }

    /** The latest drain punctuator, which must be live, punctuating at {@code now}. */
    void drainTick(long now) {
      List<CapturedPunctuator> drains = drains();
      assertThat(drains).as("a drain punctuator").isNotEmpty();
      CapturedPunctuator drain = drains.get(drains.size() - 1);
      assertThat(drain.cancelled()).as("drain cancelled").isFalse();
      drain.getPunctuator().punctuate(now);
    }

    /** topic|key|value of each record forwarded since the last call. */
    List<String> out() {
      List<String> out = new ArrayList<>();
      for (CapturedForward<? extends byte[], ? extends Outgoing> f : context.forwarded()) {
        out.add(f.record().value().topic() + "|" + text(f.record().key()) + "|" + text(f.record().value().value()));
      }
      context.resetForwards();
      return out;
    }

    /** Every position record in {@code store}, as timestamp -> position. */
    List<KeyValue<Long, ScheduleCodec.Position>> positions(WindowStore<Bytes, byte[]> store) {
      List<KeyValue<Long, ScheduleCodec.Position>> out = new ArrayList<>();
      try (WindowStoreIterator<byte[]> it = store.fetch(Bytes.wrap(ScheduleCodec.POSITION_KEY), 0, Long.MAX_VALUE)) {
        it.forEachRemaining(kv -> out.add(KeyValue.pair(kv.key, ScheduleCodec.decodePosition(kv.value))));
      }
      return out;
    }

    ScheduleCodec.Position position() {
      List<KeyValue<Long, ScheduleCodec.Position>> all = positions(schedule);
      assertThat(all).hasSize(1);
      return all.get(0).value;
    }
  }

  private Task start(DelayConfig cfg) {
    config = cfg;
    budget = new SweepBudget(config.batch(), config.sweepTimeMs(), config.drainTickMs(), nanos::get);
    task = new Task(tasks.size());
    tasks.add(task);
    return task.start();
  }

  private Task start() {
    return start(DelayConfig.defaults());
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  private static ScheduleCommand schedule(String id, long dueMs) {
    return ScheduleCommand.newBuilder().setId(id).setOp(ScheduleOp.SCHEDULE).setDeliverAt(Instant.ofEpochMilli(dueMs))
        .setTargetTopic("im.messages").setKey(ByteBuffer.wrap(utf8("conv-" + id)))
        .setValue(ByteBuffer.wrap(utf8("value-" + id))).setHeaders(Map.of()).build();
  }

  private static ScheduleCommand cancel(String id, String requester) {
    return ScheduleCommand.newBuilder().setId(id).setOp(ScheduleOp.CANCEL).setDeliverAt(Instant.ofEpochMilli(T0))
        .setHeaders(requester == null ? Map.of() : Map.of(DelayHeaders.REQUESTER, ByteBuffer.wrap(utf8(requester))))
        .build();
  }

  private static String delivered(String id) {
    return "im.messages|conv-" + id + "|value-" + id;
  }

  private double gauge(String name) {
    return meters.get(name).gauge().value();
  }

  private double counter(String name, String... tags) {
    return meters.get(name).tags(tags).counter().count();
  }

  private static String header(CapturedForward<? extends byte[], ? extends Outgoing> f, String name) {
    Header h = f.record().headers().lastHeader(name);
    return h == null ? null : text(h.value());
  }

  @Test
  void aRecordDueExactlyAtTheTickGoesOutAtThatTickAndOneDueAMillisecondLaterWaitsForTheNext() {
    Task t = start();
    t.send(schedule("a", T0 + 1_000));
    t.send(schedule("b", T0 + 1_001));

    // now: T0+1000, exactly a's due time
    t.tick(T0 + 1_000);
    assertThat(t.out()).containsExactly(delivered("a"));
    // now: T0+1001
    t.tick(T0 + 1_001);
    assertThat(t.out()).containsExactly(delivered("b"));
  }

  @Test
  void aSweepThatDeliversCommitsAndWritesThePositionAnIdleOneInTheSameSegmentDoesNeither() {
    Task t = start();
    t.send(schedule("a", T0 + 1_000));

    // now: T0+500, nothing due. The first sweep of an instance records where it is (no commit needed for that).
    t.tick(T0 + 500);
    assertThat(t.context.committed()).isFalse();
    assertThat(t.position().fileFromMs()).isEqualTo(T0 + 501);

    // now: T0+700, still nothing due: no changelog write, no commit
    t.tick(T0 + 700);
    assertThat(t.context.committed()).isFalse();
    assertThat(t.position().fileFromMs()).isEqualTo(T0 + 501);

    // now: T0+1000, a is delivered: its position goes into the same commit
    t.tick(T0 + 1_000);
    assertThat(t.out()).containsExactly(delivered("a"));
    assertThat(t.context.committed()).isTrue();
    assertThat(t.position().fileFromMs()).isEqualTo(T0 + 1_001);
    assertThat(t.position().resumeFrom()).isEqualTo(ScheduleCodec.duePrefix(T0 + 1_001));
  }

  @Test
  void aRestartResumesFromTheStoredPositionSoNothingIsDeliveredTwiceAndThePendingCountIsKept() {
    Task t = start();
    t.send(schedule("a", T0 + 1_000));
    t.send(schedule("b", T0 + 2_000));
    t.send(schedule("c", T0 + 10_000));
    assertThat(gauge("im.delay.scheduled")).isEqualTo(3);
    assertThat(counter("im.delay.schedules")).isEqualTo(3);
    t.tick(T0 + 1_000);
    t.tick(T0 + 2_000);
    assertThat(t.out()).containsExactly(delivered("a"), delivered("b"));

    // When the task closes, its schedules leave the gauge; a new instance on the same stores starts
    t.processor.close();
    assertThat(gauge("im.delay.scheduled")).isZero();
    t.start();

    // Then it counts c from the stored position and delivers only c, once
    assertThat(gauge("im.delay.scheduled")).isEqualTo(1);
    t.tick(T0 + 3_000);
    assertThat(t.out()).isEmpty();
    t.tick(T0 + 10_000);
    assertThat(t.out()).containsExactly(delivered("c"));
    assertThat(gauge("im.delay.scheduled")).isZero();
  }

  @Test
  void thePositionIsFiledAtItsSegmentPlusTheRetentionSoUndeliveredEntriesOfItsSegmentStay() {
    Task t = start(DelayConfig.defaults().withSegment(60_000));
    long segment = T0 - Math.floorMod(T0, 60_000L);
    t.send(schedule("a", T0 + 50_000));

    // now: T0+40000, late in a's segment: the position is filed at that segment's start + retention
    t.tick(T0 + 40_000);
    assertThat(t.positions(t.schedule)).extracting(kv -> kv.key)
        .containsExactly(segment + DelayTopology.STORE_RETENTION_MS - 1);
    // now: T0+50000: a, filed in the position's segment, is still there
    t.tick(T0 + 50_000);
    assertThat(t.out()).containsExactly(delivered("a"));

    // now: T0+70000, in the next segment: one position record per store, the older one deleted
    t.tick(T0 + 70_000);
    long next = segment + 60_000 + DelayTopology.STORE_RETENTION_MS - 1;
    assertThat(t.positions(t.schedule)).extracting(kv -> kv.key).containsExactly(next);
    assertThat(t.positions(t.index)).extracting(kv -> kv.key).containsExactly(next);
  }

  @Test
  void aCancelledScheduleIsNotDeliveredASecondCancelIsANoOpAndTheIdCanBeScheduledAfresh() {
    Task t = start();
    t.send(schedule("a", T0 + 1_000));

    t.send(cancel("a", null));
    t.send(cancel("a", null));
    assertThat(counter("im.delay.cancels", "result", "removed")).isEqualTo(1);
    assertThat(counter("im.delay.cancels", "result", "noop")).isEqualTo(1);
    assertThat(gauge("im.delay.scheduled")).isZero();

    t.send(schedule("a", T0 + 2_000));
    assertThat(gauge("im.delay.scheduled")).isEqualTo(1);
    t.tick(T0 + 1_000);
    assertThat(t.out()).isEmpty();
    t.tick(T0 + 2_000);
    assertThat(t.out()).containsExactly(delivered("a"));
  }

  @Test
  void anIdleTickSchedulesNoDrainEvenWhenTheClockStepsBack() {
    Task t = start();
    t.tick(T0 + 1_000);
    // now: T0+900, the wall clock stepped back
    t.tick(T0 + 900);
    t.tick(T0 + 2_000);
    assertThat(t.drains()).isEmpty();
  }

  @Test
  void aScheduleCanBeCancelledOnlyByItsSenderOrAnOperator() {
    Task t = start();
    t.send(fromSender(schedule("x1", T0 + 5_000), "alice"));
    t.send(fromSender(schedule("x2", T0 + 6_000), "alice"));
    t.send(schedule("x3", T0 + 6_000));

    // bob may not cancel x2 (rejected: the handler dead-letters it); an unknown id is a no-op; alice cancels x1;
    // bob may cancel x3, which records no sender
    assertThatThrownBy(() -> t.send(cancel("x2", "bob"))).isInstanceOfSatisfying(RejectedRecord.class, r -> {
      assertThat(r.code()).isEqualTo("NOT_SENDER");
      assertThat(r.source()).isEqualTo("delay");
      assertThat(r.reason()).isEqualTo("CANCEL of scheduled message x2 by bob, but only its sender may cancel it");
    });
    assertThat(t.out()).isEmpty();
    t.send(cancel("unknown", null));
    t.send(cancel("x1", "alice"));
    t.send(cancel("x3", "bob"));
    assertThat(counter("im.delay.cancels", "result", "removed")).isEqualTo(2);
    assertThat(counter("im.delay.cancels", "result", "noop")).isEqualTo(1);
    assertThat(counter("im.delay.rejected", "reason", "not-sender")).isEqualTo(1);
    assertThat(gauge("im.delay.scheduled")).isEqualTo(1);

    t.tick(T0 + 6_000);
    assertThat(t.out()).containsExactly(delivered("x2"));
  }

  private static ScheduleCommand fromSender(ScheduleCommand command, String sender) {
    command.setHeaders(Map.of(DelayHeaders.SENDER, ByteBuffer.wrap(utf8(sender))));
    return command;
  }

  @Test
  void aCancelWithARequesterOfAnUndecodableStoredScheduleIsHonoured() {
    Task t = start();
    t.send(schedule("a", T0 + 1_000));
    t.schedule.put(Bytes.wrap(ScheduleCodec.scheduleKey(T0 + 1_000, utf8("a"))), new byte[] {9, 9}, T0 + 1_000);

    t.send(cancel("a", "bob"));

    assertThat(t.out()).isEmpty();
    assertThat(counter("im.delay.cancels", "result", "removed")).isEqualTo(1);
    t.tick(T0 + 1_000);
    assertThat(t.out()).isEmpty();
  }

  @Test
  void anUndecodableStoredEntryIsQuarantinedCountedAsGoneAndCommitted() {
    Task t = start();
    t.send(schedule("a", T0 + 500));
    t.schedule.put(Bytes.wrap(ScheduleCodec.scheduleKey(T0 + 500, utf8("a"))), new byte[] {9, 9}, T0 + 500);

    t.tick(T0 + 1_000);

    assertThat(t.out()).containsExactly("im.rejected|a|" + text(new byte[] {9, 9}));
    assertThat(gauge("im.delay.scheduled")).isZero();
    assertThat(t.context.committed()).isTrue();
  }

  @Test
  void whileABacklogDrainsItsGaugeCountsDownWithoutARescanAndTheDrainStopsWhenItIsGone() {
    Task t = start(DelayConfig.defaults().withBatch(2, 20));
    for (int i = 1; i <= 5; i++) {
      t.send(schedule("e" + i, T0 + i * 100));
    }

    // now: T0+1000: two delivered, three counted as backlog, a drain punctuator follows up
    t.tick(T0 + 1_000);
    assertThat(t.out()).containsExactly(delivered("e1"), delivered("e2"));
    assertThat(gauge("im.delay.due.backlog")).isEqualTo(3);
    assertThat(t.drains()).hasSize(1);

    // a record already due arrives; the drain tick delivers two more and counts down from 3 (no rescan)
    t.send(schedule("e6", T0 + 600));
    t.drainTick(T0 + 1_020);
    assertThat(t.out()).containsExactly(delivered("e3"), delivered("e4"));
    assertThat(gauge("im.delay.due.backlog")).isEqualTo(1);

    // the last two: the backlog is gone, the drain cancels itself
    t.drainTick(T0 + 1_040);
    assertThat(t.out()).containsExactly(delivered("e5"), delivered("e6"));
    assertThat(gauge("im.delay.due.backlog")).isZero();
    assertThat(t.drains()).singleElement().matches(CapturedPunctuator::cancelled);
  }

  @Test
  void aTaskWhoseThreadUsedUpTheRoundWaitsForADrainTickNotTheNextRegularTick() {
    // Given: two tasks of one stream thread share a round of one record
    DelayConfig cfg = DelayConfig.defaults().withBatch(1, 20);
    Task first = start(cfg);
    Task second = new Task(1).start();
    tasks.add(second);
    first.send(schedule("a", T0 + 100));
    second.send(schedule("b", T0 + 100));

    // When: the first task uses the round up, then the second punctuates in the same loop
    first.tick(T0 + 1_000);
    second.tick(T0 + 1_000);

    // Then: the second delivers nothing now, but on its drain tick after the commit
    assertThat(first.out()).containsExactly(delivered("a"));
    assertThat(second.out()).isEmpty();
    assertThat(meters.get("im.delay.punctuation.records").summary().count()).isEqualTo(2);
    second.drainTick(T0 + 1_020);
    assertThat(second.out()).containsExactly(delivered("b"));
  }

  @Test
  void whenTheWallClockStepsBackNothingIsDeliveredEarly() {
    Task t = start();
    t.send(schedule("a", T0 + 1_500));
    t.tick(T0 + 1_000);

    // now: T0+900, the clock stepped back: nothing is due, no drain
    t.tick(T0 + 900);
    assertThat(t.out()).isEmpty();
    assertThat(t.drains()).isEmpty();
    assertThat(meters.get("im.delay.punctuation.records").summary().count()).isEqualTo(2);
    t.tick(T0 + 2_000);
    assertThat(t.out()).containsExactly(delivered("a"));
  }

  @Test
  void aTargetTopicThatWentAwayBeforeDeliveryIsRejectedWithTheReason() {
    Task t = start();
    t.send(schedule("a", T0 + 1_000));
    existing.remove("im.messages");

    t.tick(T0 + 1_000);

    assertThat(t.context.forwarded()).hasSize(1);
    CapturedForward<? extends byte[], ? extends Outgoing> f = t.context.forwarded().get(0);
    assertThat(f.record().value().topic()).isEqualTo("im.rejected");
    assertThat(header(f, RejectedHeaders.MESSAGE))
        .isEqualTo("undeliverable at " + (T0 + 1_000) + ": target topic 'im.messages' does not exist");
    assertThat(header(f, RejectedHeaders.TOPIC)).isEqualTo("im.messages");
    assertThat(header(f, DelayHeaders.SCHEDULE_ID)).isEqualTo("a");
    assertThat(counter("im.delay.rejected", "reason", "target")).isEqualTo(1);
  }

  @Test
  void commandsWithANulInTheIdOrAnUnknownOperationAreRejectedWithWhereTheyCameFrom() {
    Task t = start();
    t.context.setRecordMetadata("im.delayed", 3, 42);

    ScheduleCommand unknown = schedule("u", T0 + 1_000);
    unknown.setOp(ScheduleOp.UNKNOWN);

    // (the processing exception handler writes each to im.rejected with where it came from: DelayTopologyTest)
    List<String> reasons = new ArrayList<>();
    for (ScheduleCommand bad : List.of(schedule("\0lead", T0 + 1_000), schedule("mid\0dle", T0 + 1_000), unknown)) {
      assertThatThrownBy(() -> t.send(bad)).isInstanceOfSatisfying(RejectedRecord.class, r -> {
        assertThat(r.code()).isEqualTo(RejectedRecord.INVALID);
        reasons.add(r.reason());
      });
    }
    assertThat(t.context.forwarded()).isEmpty();
    assertThat(reasons).containsExactly("schedule id contains a NUL character",
        "schedule id contains a NUL character",
        "unknown schedule operation UNKNOWN (written by a newer producer?)");
    assertThat(counter("im.delay.rejected", "reason", "invalid")).isEqualTo(3);
    assertThat(counter("im.delay.schedules")).isZero();
    assertThat(gauge("im.delay.scheduled")).isZero();
  }
}
