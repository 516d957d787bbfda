package dev.impipe.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.StoredValues;
import dev.impipe.testkit.StreamsTestConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The retention sweep at a backlog: what one punctuation (one transaction under exactly-once) writes is bounded by
 * the stream thread's budget, however many entries expired and however many tasks the thread runs, and the backlog
 * still drains; a stored entry that does not decode is quarantined instead of failing every sweep.
 *
 * <p>The materialiser runs with in-memory stores that count their writes; in production each such write is one
 * changelog record of the punctuation's transaction (the test stores skip the changelog, so a million entries fit
 * in a fast test).
 */
class RetentionSweepBacklogTest {

  private static final long DAY = Duration.ofDays(1).toMillis();
  private static final long RETENTION = 7 * DAY;
  private static final long SWEEP_INTERVAL = 60_000;
  /** Wall clock of the drivers at start: entries stamped at 1000 are long expired. */
  private static final Instant START = Instant.ofEpochMilli(30 * DAY);
  /** A value whose text starts with this does not decode (a schema gone, a corrupt record). */
  private static final String CORRUPT = "corrupt:";

  private final AtomicLong writes = new AtomicLong();

  @Test
  @Tag("slow") // a million entries: run by verify's unit tests, not once per mutant by PIT
  void aMillionExpiredEntriesDrainWithinTheThreadBudgetPerTransaction() {
    // The time bound is generous here (a loaded machine would make the step count vary); PunctuationBudgetTest
    // covers it.
    PunctuationBudget budget = new PunctuationBudget(30_000, 10_000, PunctuationBudget.DEFAULT_WINDOW_MS);
    try (TopologyTestDriver driver = driver(budget, "app-a")) {
      // Given a million entries that expired long ago (one user in a thousand, stamped at t = 1 s).
      int backlog = 1_000_000;
      long t0 = System.nanoTime();
      fill(driver, 0, backlog);
      System.out.printf("filled in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
      writes.set(0);

      // When the wall clock moves on by one commit window at a time, the first step reaching the sweep interval.
      long maxWrites = 0;
      int steps = 0;
      long left = entries(driver);
      driver.advanceWallClockTime(Duration.ofMillis(SWEEP_INTERVAL));
      while (left > 0 && steps < 5_000) {
        long before = left;
        long w = writes.getAndSet(0);
        maxWrites = Math.max(maxWrites, w);
        left = entries(driver);
        // Then every punctuation makes progress and stays within one budget of changelog records.
        assertThat(w).isLessThanOrEqualTo(budget.maxRecords());
        assertThat(left).as("entries left after step %d", steps).isLessThan(before);
        driver.advanceWallClockTime(Duration.ofMillis(PunctuationBudget.DEFAULT_WINDOW_MS));
        steps++;
      }
      System.out.printf("drained in %d steps, %d ms%n", steps, (System.nanoTime() - t0) / 1_000_000);
      // And the whole backlog drained: entries, time index and counts are empty.
      assertThat(left).isZero();
      assertThat(driver.getKeyValueStore("index").approximateNumEntries()).isZero();
      assertThat(driver.getKeyValueStore("counts").approximateNumEntries()).isZero();
      assertThat(maxWrites).isPositive().isLessThanOrEqualTo(budget.maxRecords());
      // A full budget (10,000 entries) per window: a hundred windows, not one sweep of a million.
      assertThat(steps).isBetween(backlog * TimelineMaterialiser.WRITES_PER_ENTRY / 30_000 - 1,
          backlog * TimelineMaterialiser.WRITES_PER_ENTRY / 30_000 + 1);
    }
  }

  @Test
  void twoTasksOnOneThreadShareOneBudget() {
    PunctuationBudget budget = new PunctuationBudget(3_000, 1_000, PunctuationBudget.DEFAULT_WINDOW_MS);
    try (TopologyTestDriver task1 = driver(budget, "app-b"); TopologyTestDriver task2 = driver(budget, "app-b")) {
      // Given two tasks (two drivers, this one thread), 5,000 expired entries each.
      fill(task1, 0, 5_000);
      fill(task2, 0, 5_000);
      writes.set(0);
      // When both punctuate in the same window (same wall-clock time), as one thread's tasks do before a commit:
      task1.advanceWallClockTime(Duration.ofMillis(SWEEP_INTERVAL));
      task2.advanceWallClockTime(Duration.ofMillis(SWEEP_INTERVAL));
      // Then together they wrote one budget (1,000 entries x 3 records), the first task all of it.
      assertThat(writes.getAndSet(0)).isEqualTo(3_000);
      assertThat(entries(task1)).isEqualTo(4_000);
      assertThat(entries(task2)).isEqualTo(5_000);
      // When the next window comes, the second task gets its turn too (it asks first now).
      task2.advanceWallClockTime(Duration.ofMillis(PunctuationBudget.DEFAULT_WINDOW_MS));
      assertThat(entries(task2)).isEqualTo(4_000);
    }
  }

  @Test
  void anEntryThatDoesNotDecodeIsQuarantinedAndTheSweepGoesOn() {
    PunctuationBudget budget = new PunctuationBudget(30_000, 1_000, PunctuationBudget.DEFAULT_WINDOW_MS);
    try (TopologyTestDriver driver = driver(budget, "app-c")) {
      // Given three expired entries of u1, the second of which no longer decodes.
      KeyValueStore<Bytes, String> entries = driver.getKeyValueStore("entries");
      KeyValueStore<Bytes, byte[]> index = driver.getKeyValueStore("index");
      KeyValueStore<Bytes, Long> counts = driver.getKeyValueStore("counts");
      for (long seq = 0; seq < 3; seq++) {
        Bytes key = StoreKeys.entry("u1", seq);
        entries.put(key, seq == 1 ? CORRUPT + "bytes" : "u1");
        index.put(StoreKeys.timeIndex(1_000 + seq, key), new byte[0]);
      }
      counts.put(StoreKeys.owner("u1"), 3L);

      // When the sweep runs.
      driver.advanceWallClockTime(Duration.ofMillis(SWEEP_INTERVAL));

      // Then all three are gone, and the undecodable one is on the rejected topic with its stored bytes and reason.
      assertThat(entries(driver)).isZero();
      assertThat(counts.get(StoreKeys.owner("u1"))).isNull();
      List<TestRecord<String, byte[]>> rejected = driver.createOutputTopic("rejected", new StringDeserializer(),
          new ByteArrayDeserializer()).readRecordsToList();
      assertThat(rejected).hasSize(1);
      TestRecord<String, byte[]> r = rejected.get(0);
      assertThat(r.key()).isEqualTo("u1");
      assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo(CORRUPT + "bytes");
      assertThat(new String(r.headers().lastHeader(RejectedHeaders.MESSAGE).value(), StandardCharsets.UTF_8))
          .contains("does not decode").contains("entries");
      assertThat(r.headers().lastHeader(RejectedHeaders.STORE_KEY).value())
          .isEqualTo(StoreKeys.entry("u1", 1).get());
    }
  }

  private TopologyTestDriver driver(PunctuationBudget budget, String app) {
    java.util.Properties props = StreamsTestConfig.forDriver(app);
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    return new TopologyTestDriver(topology(budget), props, START);
  }

  private Topology topology(PunctuationBudget budget) {
    Topology t = new Topology();
    t.addSource("in", new StringDeserializer(), new StringDeserializer(), "timeline");
    t.addProcessor("materialiser", () -> new TimelineMaterialiser<>(TimelineMaterialiser.Spec.<String>builder()
        .entryStore("entries").timeIndexStore("index").countStore("counts").owner(v -> v, "owner")
        .retention(RETENTION, SWEEP_INTERVAL, true).build(), budget, "rejected-sink"), "in");
    t.addSink("rejected-sink", "rejected", new ByteArraySerializer(), new ByteArraySerializer(), "materialiser");
    t.addStateStore(Stores.keyValueStoreBuilder(CountingStore.supplier("entries", writes), Serdes.Bytes(),
        StoredValues.quarantining(fragileStrings())).withLoggingDisabled(), "materialiser");
    t.addStateStore(Stores.keyValueStoreBuilder(CountingStore.supplier("index", writes), Serdes.Bytes(),
        Serdes.ByteArray()).withLoggingDisabled(), "materialiser");
    t.addStateStore(Stores.keyValueStoreBuilder(CountingStore.supplier("counts", writes), Serdes.Bytes(),
        Serdes.Long()).withLoggingDisabled(), "materialiser");
    return t;
  }

  /** Strings, except that one starting with {@link #CORRUPT} does not decode. */
  private static Serde<String> fragileStrings() {
    Deserializer<String> strings = new StringDeserializer();
    return Serdes.serdeFrom(Serdes.String().serializer(), (topic, data) -> {
      String s = strings.deserialize(topic, data);
      if (s != null && s.startsWith(CORRUPT)) {
        throw new org.apache.kafka.common.errors.SerializationException("unknown schema");
      }
      return s;
    });
  }

  /** Entries {@code from..to-1}, expired long ago, over a thousand users. */
  private static void fill(TopologyTestDriver driver, int from, int to) {
    KeyValueStore<Bytes, String> entries = driver.getKeyValueStore("entries");
    KeyValueStore<Bytes, byte[]> index = driver.getKeyValueStore("index");
    KeyValueStore<Bytes, Long> counts = driver.getKeyValueStore("counts");
    byte[] present = new byte[0];
    for (int i = from; i < to; i++) {
      String owner = "u" + (i % 1_000);
      Bytes key = StoreKeys.entry(owner, i);
      entries.put(key, owner);
      index.put(StoreKeys.timeIndex(1_000 + i, key), present);
    }
    for (int u = 0; u < 1_000; u++) {
      long n = (to - from) / 1_000 + ((to - from) % 1_000 > u ? 1 : 0);
      if (n > 0) {
        counts.put(StoreKeys.owner("u" + u), n);
      }
    }
  }

  private static long entries(TopologyTestDriver driver) {
    return driver.getKeyValueStore("entries").approximateNumEntries();
  }
}
