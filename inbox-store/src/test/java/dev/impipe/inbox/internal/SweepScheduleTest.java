package dev.impipe.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.inbox.TestData;
import dev.impipe.runtime.domain.HistoryKey;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.RejectedRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.MockProcessorContext.CapturedPunctuator;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * The materialisers one processor at a time, on a mock context whose punctuations the test fires by hand: cursors
 * only move forward, the retention passes run as often as they should and no more, a catch-up runs while a backlog
 * is left and is cancelled once it is gone, history expires when (and only when) it is configured to.
 */
class SweepScheduleTest {

  private static final long DAY = Duration.ofDays(1).toMillis();
  private static final long RETENTION = 7 * DAY;
  private static final long SWEEP = 60_000;
  private static final long T = 100 * DAY;

  private final AtomicLong writes = new AtomicLong();
  private final MockProcessorContext<Void, Void> ctx = new MockProcessorContext<>();

  @Test
  void aCursorOnlyMovesForwardAndARepeatedCommitWritesNothing() {
    KeyValueStore<Bytes, Long> cursors = store("cursors", Serdes.Long());
    KeyValueStore<Bytes, Long> times = store("times", Serdes.Long());
    CursorMaterialiser p = cursors(RETENTION, new PunctuationBudget(1_000, 10_000, 100));
    Bytes phone = StoreKeys.cursor("bob", "phone");

    commit(p, 0, 100); // seq 0 is a real position
    assertThat(cursors.get(phone)).isZero();
    commit(p, 5, 200);
    assertThat(cursors.get(phone)).isEqualTo(5);
    writes.set(0);
    commit(p, 5, 200); // the same commit again: no changelog record at all
    assertThat(writes.get()).isZero();
    commit(p, 3, 300); // older seq, newer time: the cursor stays, the device is alive
    assertThat(cursors.get(phone)).isEqualTo(5);
    assertThat(times.get(phone)).isEqualTo(300);
    commit(p, 9, 250); // newer seq, older time: the cursor moves, its age does not go back
    assertThat(cursors.get(phone)).isEqualTo(9);
    assertThat(times.get(phone)).isEqualTo(300);
    assertThatThrownBy(() -> commit(p, -1, 400)).isInstanceOf(RejectedRecord.class);
  }

  @Test
  void cursorsKeptForeverHaveNoCommitTimesAndNoSweep() {
    store("cursors", Serdes.Long());
    KeyValueStore<Bytes, Long> times = store("times", Serdes.Long());
    CursorMaterialiser p = cursors(Long.MAX_VALUE, new PunctuationBudget(1_000, 10_000, 100));
    commit(p, 4, 100);
    assertThat(ctx.scheduledPunctuators()).isEmpty();
    assertThat(times.approximateNumEntries()).isZero();
  }

  @Test
  void aCursorExpiresExactlyAtTheRetentionAndAFinishedPassWaitsATenthOfIt() {
    KeyValueStore<Bytes, Long> cursors = store("cursors", Serdes.Long());
    KeyValueStore<Bytes, Long> times = store("times", Serdes.Long());
    CursorMaterialiser p = cursors(RETENTION, new PunctuationBudget(1_000, 10_000, 100));
    assertThat(ctx.scheduledPunctuators()).singleElement()
        .satisfies(s -> assertThat(s.getInterval()).isEqualTo(Duration.ofMillis(SWEEP)));
    commit(p, 1, T); // u... bob's phone, committed at T
    ctx.setRecordMetadata("cursors", 0, 1);
    p.process(new Record<>("bob", TestData.cursor("bob", "laptop", 1), T + 1));

    // When the sweep runs exactly one retention after the phone's commit
    sweep(0, T + RETENTION);
    // Then the phone is gone, the laptop (1 ms younger) stays
    assertThat(cursors.get(StoreKeys.cursor("bob", "phone"))).isNull();
    assertThat(times.get(StoreKeys.cursor("bob", "phone"))).isNull();
    assertThat(cursors.get(StoreKeys.cursor("bob", "laptop"))).isEqualTo(1);

    // A cursor stored before commit times were kept is seen by the next pass only, a tenth of the retention later
    cursors.put(StoreKeys.cursor("carol", "phone"), 3L);
    sweep(0, T + RETENTION + RETENTION / 10 - 1);
    assertThat(times.get(StoreKeys.cursor("carol", "phone"))).isNull();
    assertThat(cursors.get(StoreKeys.cursor("bob", "laptop"))).as("expired, but no pass ran").isEqualTo(1);
    sweep(0, T + RETENTION + RETENTION / 10);
    assertThat(times.get(StoreKeys.cursor("carol", "phone"))).isEqualTo(T + RETENTION + RETENTION / 10);
    assertThat(cursors.get(StoreKeys.cursor("bob", "laptop"))).isNull();
    // and no catch-up was needed for any of it
    assertThat(ctx.scheduledPunctuators()).hasSize(1);
  }

  @Test
  void aCursorPassCutShortByTheBudgetGoesOnInACatchUpThatStopsWhenDone() {
    KeyValueStore<Bytes, Long> cursors = store("cursors", Serdes.Long());
    KeyValueStore<Bytes, Long> times = store("times", Serdes.Long());
    cursors(RETENTION, new PunctuationBudget(100, 10_000, 100));
    for (int i = 0; i < 250; i++) {
      cursors.put(StoreKeys.cursor("u" + i, "phone"), 1L); // no commit time yet: one record each to adopt
    }
    sweep(0, T);
    assertThat(times.approximateNumEntries()).isEqualTo(100);
    assertThat(ctx.scheduledPunctuators()).hasSize(2);
    CapturedPunctuator catchUp = ctx.scheduledPunctuators().get(1);
    assertThat(catchUp.getInterval()).isEqualTo(Duration.ofMillis(TimelineMaterialiser.CATCH_UP_MS));
    catchUp.getPunctuator().punctuate(T + 100);
    assertThat(times.approximateNumEntries()).isEqualTo(200);
    assertThat(catchUp.cancelled()).isFalse();
    catchUp.getPunctuator().punctuate(T + 200);
    assertThat(times.approximateNumEntries()).isEqualTo(250);
    assertThat(catchUp.cancelled()).as("the pass is done").isTrue();
    // An idle sweep later starts no catch-up
    sweep(0, T + SWEEP);
    assertThat(ctx.scheduledPunctuators()).hasSize(2);
  }

  @Test
  void timelineEntriesBeyondThePerOwnerCapEvictTheOldest() {
    KeyValueStore<Bytes, String> entries = store("entries", Serdes.String());
    store("index", Serdes.ByteArray());
    KeyValueStore<Bytes, Long> counts = store("counts", Serdes.Long());
    TimelineMaterialiser<String> p = timeline(3, new PunctuationBudget(3_000, 10_000, 100));
    for (long seq = 0; seq < 5; seq++) {
      ctx.setRecordMetadata("timeline", 0, seq);
      p.process(new Record<>("u1", "u1", T));
    }
    assertThat(entries.get(StoreKeys.entry("u1", 1))).isNull();
    assertThat(entries.get(StoreKeys.entry("u1", 2))).isEqualTo("u1");
    assertThat(entries.get(StoreKeys.entry("u1", 4))).isEqualTo("u1");
    assertThat(counts.get(StoreKeys.owner("u1"))).isEqualTo(3);
  }

  @Test
  void aTimelineSweepCutShortByTheBudgetCatchesUpAndStopsWhenTheBacklogIsGone() {
    KeyValueStore<Bytes, String> entries = store("entries", Serdes.String());
    KeyValueStore<Bytes, byte[]> index = store("index", Serdes.ByteArray());
    store("counts", Serdes.Long());
    TimelineMaterialiser<String> p = timeline(0, new PunctuationBudget(3_000, 10_000, 100));
    // 2,500 entries stamped at T, one at T + 1 s
    for (long seq = 0; seq <= 2_500; seq++) {
      ctx.setRecordMetadata("timeline", 0, seq);
      p.process(new Record<>("u1", "u1", seq == 2_500 ? T + 1_000 : T));
    }
    // 1 ms after one retention from T: the 2,500 are expired, the younger one is not; a budget (1,000) at a time
    sweep(0, T + RETENTION + 1);
    assertThat(entries.approximateNumEntries()).isEqualTo(1_501);
    CapturedPunctuator catchUp = ctx.scheduledPunctuators().get(1);
    catchUp.getPunctuator().punctuate(T + RETENTION + 101);
    assertThat(entries.approximateNumEntries()).isEqualTo(501);
    assertThat(catchUp.cancelled()).isFalse();
    catchUp.getPunctuator().punctuate(T + RETENTION + 201);
    assertThat(entries.approximateNumEntries()).isEqualTo(1);
    assertThat(index.approximateNumEntries()).isEqualTo(1);
    assertThat(catchUp.cancelled()).as("backlog gone").isTrue();
    // A sweep with nothing expired starts no catch-up
    sweep(0, T + RETENTION + 500);
    assertThat(ctx.scheduledPunctuators()).hasSize(2);
    assertThat(entries.get(StoreKeys.entry("u1", 2_500))).isEqualTo("u1");
  }

  @Test
  void historyExpiresOnlyWhenConfiguredAndItsAppliedSeqOnlyRises() {
    KeyValueStore<Bytes, ChatMessage> history = store("history", null);
    KeyValueStore<Bytes, byte[]> index = store("history-index", Serdes.ByteArray());
    KeyValueStore<Bytes, Long> applied = store("applied", Serdes.Long());
    HistoryMaterialiser p = new HistoryMaterialiser("history", "history-index", "applied", RETENTION, SWEEP, true);
    p.init(ctx);
    assertThat(ctx.scheduledPunctuators()).singleElement()
        .satisfies(s -> assertThat(s.getInterval()).isEqualTo(Duration.ofMillis(SWEEP)));

    p.process(new Record<>(HistoryKey.of("g", 5), TestData.chat("g", "alice", "five", Instant.EPOCH), T));
    p.process(new Record<>(HistoryKey.of("g", 3), TestData.chat("g", "alice", "three", Instant.EPOCH), T + 10));
    p.process(new Record<>(HistoryKey.of("g", 4), null, T + 20)); // a tombstone of a seq the fan-out dropped
    assertThat(applied.get(HistoryMaterialiser.APPLIED_KEY)).isEqualTo(5);
    writes.set(0);
    p.process(new Record<>(HistoryKey.of("g", 5), TestData.chat("g", "alice", "five", Instant.EPOCH), T + 30));
    assertThat(writes.get()).as("entry and time index, the applied seq does not move").isEqualTo(2);
    p.process(new Record<>(HistoryKey.of("g", 6), null, T + 40));
    assertThat(applied.get(HistoryMaterialiser.APPLIED_KEY)).isEqualTo(6);

    // One retention after T + 10: the entry stamped T went, the one of T + 10 stays
    sweep(0, T + 10 + RETENTION);
    assertThat(history.get(StoreKeys.entry("g", 3))).isNotNull();
    assertThat(index.approximateNumEntries()).isEqualTo(2); // T + 10 and the rewrite at T + 30
    sweep(0, T + 31 + RETENTION);
    assertThat(history.approximateNumEntries()).isZero();
    assertThat(index.approximateNumEntries()).isZero();
    assertThat(ctx.scheduledPunctuators()).hasSize(1);
  }

  @Test
  void historyKeptForeverHasNoTimeIndexAndNoSweep() {
    KeyValueStore<Bytes, ChatMessage> history = store("history", null);
    KeyValueStore<Bytes, byte[]> index = store("history-index", Serdes.ByteArray());
    store("applied", Serdes.Long());
    HistoryMaterialiser p = new HistoryMaterialiser("history", "history-index", "applied", Long.MAX_VALUE, SWEEP,
        false);
    p.init(ctx);
    p.process(new Record<>(HistoryKey.of("g", 0), TestData.chat("g", "alice", "zero", Instant.EPOCH), 1));
    assertThat(history.approximateNumEntries()).isEqualTo(1);
    assertThat(index.approximateNumEntries()).isZero();
    assertThat(ctx.scheduledPunctuators()).isEmpty();
  }

  private void sweep(int punctuator, long now) {
    List<CapturedPunctuator> all = ctx.scheduledPunctuators();
    all.get(punctuator).getPunctuator().punctuate(now);
  }

  private CursorMaterialiser cursors(long retention, PunctuationBudget budget) {
    CursorMaterialiser p = new CursorMaterialiser("cursors", "times", retention, SWEEP, budget);
    p.init(ctx);
    return p;
  }

  private TimelineMaterialiser<String> timeline(long cap, PunctuationBudget budget) {
    @SuppressWarnings({"unchecked", "rawtypes"})
    MockProcessorContext<byte[], byte[]> typed = (MockProcessorContext) ctx;
    TimelineMaterialiser<String> p = new TimelineMaterialiser<>(TimelineMaterialiser.Spec.<String>builder()
        .entryStore("entries").timeIndexStore("index").countStore("counts").owner(v -> v, "owner")
        .retention(RETENTION, SWEEP, true).maxPerOwner(cap).build(), budget, null);
    p.init(typed);
    return p;
  }

  private void commit(CursorMaterialiser p, long seq, long time) {
    DeviceCursor c = TestData.cursor("bob", "phone", seq);
    p.process(new Record<>("bob", c, time));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private <V> KeyValueStore<Bytes, V> store(String name, Serde<V> serde) {
    Serde<V> values = serde != null ? serde : (Serde) chatSerde();
    KeyValueStore<Bytes, V> s = Stores.keyValueStoreBuilder(CountingStore.supplier(name, writes), Serdes.Bytes(),
        values).withLoggingDisabled().build();
    s.init(ctx.getStateStoreContext(), s);
    ctx.addStateStore(s);
    return s;
  }

  /** ChatMessage values as Java-serialised bytes: the materialiser never looks at the encoding. */
  private static Serde<ChatMessage> chatSerde() {
    return Serdes.serdeFrom((topic, m) -> m == null ? null : toBytes(m), (topic, b) -> b == null ? null
        : fromBytes(b));
  }

  private static byte[] toBytes(ChatMessage m) {
    try {
      return m.toByteBuffer().array();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static ChatMessage fromBytes(byte[] b) {
    try {
      return ChatMessage.fromByteBuffer(java.nio.ByteBuffer.wrap(b));
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
