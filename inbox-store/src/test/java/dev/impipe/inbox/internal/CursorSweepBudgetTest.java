package dev.impipe.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.testkit.StreamsTestConfig;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * The device-cursor sweep at a backlog: it spends the thread's punctuation budget (the one the inbox retention
 * sweep spends too), so one punctuation (one transaction) writes at most a budget of changelog records however
 * many cursors expired, looks at a bounded slice of keys, and still removes them all.
 */
class CursorSweepBudgetTest {

  private static final Duration RETENTION = Duration.ofDays(7);
  private static final Duration SWEEP = Duration.ofMinutes(1);
  private static final Duration WINDOW = Duration.ofMillis(PunctuationBudget.DEFAULT_WINDOW_MS);
  private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");

  private final AtomicLong writes = new AtomicLong();

  @Test
  void expiredCursorsDrainWithinTheThreadBudgetPerPunctuation() {
    PunctuationBudget budget = new PunctuationBudget(100, 10_000, WINDOW.toMillis());
    try (TopologyTestDriver driver = driver(budget)) {
      // Given 1,000 devices that committed long ago
      KeyValueStore<Bytes, Long> cursors = driver.getKeyValueStore("cursors");
      KeyValueStore<Bytes, Long> times = driver.getKeyValueStore("times");
      for (int i = 0; i < 1_000; i++) {
        cursors.put(StoreKeys.cursor("u" + i, "phone"), 5L);
        times.put(StoreKeys.cursor("u" + i, "phone"), START.toEpochMilli());
      }
      writes.set(0);

      // When time passes the retention, then one commit window at a time
      long left = cursors.approximateNumEntries();
      driver.advanceWallClockTime(RETENTION.plus(SWEEP));
      int steps = 1;
      while (true) {
        // Then each punctuation removes something, writing at most the budget (two records a cursor)
        long w = writes.getAndSet(0);
        assertThat(w).isLessThanOrEqualTo(budget.maxRecords()).isPositive();
        long now = cursors.approximateNumEntries();
        assertThat(now).isLessThan(left);
        left = now;
        if (left == 0 || steps >= 100) {
          break;
        }
        driver.advanceWallClockTime(WINDOW);
        steps++;
      }
      assertThat(left).isZero();
      assertThat(times.approximateNumEntries()).isZero();
      assertThat(steps).as("50 cursors per window").isEqualTo(20);

      // And once drained, the catch-up stops: a window later nothing is written
      writes.set(0);
      driver.advanceWallClockTime(WINDOW);
      assertThat(writes.get()).isZero();
    }
  }

  @Test
  void onePunctuationLooksAtABoundedSliceOfCursors() {
    PunctuationBudget budget = new PunctuationBudget(1_000_000, 10_000, WINDOW.toMillis());
    try (TopologyTestDriver driver = driver(budget)) {
      // Given more cursors than one slice, none of them with a commit time (stored before times were kept)
      KeyValueStore<Bytes, Long> cursors = driver.getKeyValueStore("cursors");
      KeyValueStore<Bytes, Long> times = driver.getKeyValueStore("times");
      int n = CursorMaterialiser.SCAN_PER_RUN * 2 + 500;
      for (int i = 0; i < n; i++) {
        cursors.put(StoreKeys.cursor("u" + i, "phone"), 5L);
      }

      // When the sweep runs, then one slice at a time gets its commit time
      driver.advanceWallClockTime(SWEEP);
      assertThat(times.approximateNumEntries()).isEqualTo(CursorMaterialiser.SCAN_PER_RUN);
      driver.advanceWallClockTime(WINDOW);
      // (each later slice starts at the key the last one ended with, looked at again but not counted twice)
      assertThat(times.approximateNumEntries()).isBetween(2L * CursorMaterialiser.SCAN_PER_RUN - 1,
          2L * CursorMaterialiser.SCAN_PER_RUN);
      driver.advanceWallClockTime(WINDOW);
      assertThat(times.approximateNumEntries()).isEqualTo(n);
      assertThat(cursors.approximateNumEntries()).as("none removed: they age from now").isEqualTo(n);
    }
  }

  private TopologyTestDriver driver(PunctuationBudget budget) {
    Topology t = new Topology();
    t.addSource("in", new StringDeserializer(), new StringDeserializer(), "cursors-in");
    t.addProcessor("cursors-p", () -> new CursorMaterialiser("cursors", "times", RETENTION.toMillis(),
        SWEEP.toMillis(), budget), "in");
    t.addStateStore(Stores.keyValueStoreBuilder(CountingStore.supplier("cursors", writes), Serdes.Bytes(),
        Serdes.Long()).withLoggingDisabled(), "cursors-p");
    t.addStateStore(Stores.keyValueStoreBuilder(CountingStore.supplier("times", writes), Serdes.Bytes(),
        Serdes.Long()).withLoggingDisabled(), "cursors-p");
    return new TopologyTestDriver(t, StreamsTestConfig.forDriver("cursor-sweep"), START);
  }
}
