package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The budget over real RocksDB stores (Kafka Streams' own, initialised by a mock context). */
class MemtableBudgetTest {

  @TempDir
  Path stateDir;

  private final AtomicLong clock = new AtomicLong(1_000_000);
  private final MemtableBudget budget = new MemtableBudget(clock::get);
  private final List<org.apache.kafka.streams.processor.StateStore> opened = new ArrayList<>();
  private MockProcessorContext<Object, Object> context;

  @AfterEach
  void closeStores() {
    opened.forEach(s -> s.close());
  }

  private MockProcessorContext<Object, Object> context(long budgetBytes) {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, "budget-test");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    if (budgetBytes > 0) {
      props.put(MemtableBudget.CONFIG_BYTES, Long.toString(budgetBytes));
    }
    context = new MockProcessorContext<>(props, new org.apache.kafka.streams.processor.TaskId(0, 0), stateDir.toFile());
    return context;
  }

  private KeyValueStore<Bytes, byte[]> keyValue(String name) {
    StoreBuilder<KeyValueStore<Bytes, byte[]>> builder = Stores.keyValueStoreBuilder(
        budget.budgeted(Stores.persistentKeyValueStore(name)), Serdes.Bytes(), Serdes.ByteArray())
        .withLoggingDisabled().withCachingDisabled();
    KeyValueStore<Bytes, byte[]> store = builder.build();
    store.init(context.getStateStoreContext(), store);
    opened.add(store);
    return store;
  }

  private WindowStore<Bytes, byte[]> window(String name) {
    WindowStore<Bytes, byte[]> store = Stores.windowStoreBuilder(
        budget.budgeted(Stores.persistentWindowStore(name, Duration.ofDays(1),
            Duration.ofMinutes(1), false)),
        Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled().withCachingDisabled().build();
    store.init(context.getStateStoreContext(), store);
    opened.add(store);
    return store;
  }

  private static void write(KeyValueStore<Bytes, byte[]> store, int entries, int valueBytes) {
    for (int i = 0; i < entries; i++) {
      store.put(Bytes.wrap(("k" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8)), new byte[valueBytes]);
    }
  }

  private long sstFiles(String store) throws IOException {
    try (Stream<Path> files = Files.walk(stateDir)) {
      return files.filter(p -> p.toString().contains(store) && p.toString().endsWith(".sst")).count();
    }
  }

  @Test
  void theRocksDbHandlesOfThisKafkaStreamsAreReachable() {
    // A Kafka Streams upgrade that moves its RocksDB internals would silently turn the budget off: fail here instead.
    context(1_000_000);
    assertThat(RocksDBFlusher.available()).isTrue();
    assertThat(RocksDBFlusher.rocksDbStores(keyValue("kv"))).hasSize(1);
    WindowStore<Bytes, byte[]> segmented = window("win");
    segmented.put(Bytes.wrap(new byte[] {1}), new byte[] {1}, 0);
    segmented.put(Bytes.wrap(new byte[] {1}), new byte[] {1}, Duration.ofHours(13).toMillis());
    assertThat(RocksDBFlusher.rocksDbStores(segmented)).hasSizeGreaterThanOrEqualTo(2);
  }

  @Test
  void overBudgetTheLargestStoresOfTheThreadAreFlushedToDiskUntilUnderThreeQuarters() throws IOException {
    // Given a 110 kB budget and three stores holding ~61, ~30 and ~9 kB (~152 bytes an entry with the overhead)
    context(110_000);
    KeyValueStore<Bytes, byte[]> big = keyValue("big");
    KeyValueStore<Bytes, byte[]> middle = keyValue("middle");
    KeyValueStore<Bytes, byte[]> small = keyValue("small");
    write(big, 400, 100);
    write(middle, 200, 100);
    write(small, 60, 100);
    assertThat(budget.flushes()).isZero();
    assertThat(budget.held()).isBetween(95_000L, 110_000L);

    // When further writes pass the budget
    write(small, 70, 100);

    // Then the largest store alone was flushed (that brought the total under 82.5 kB): its memtable is on disk now
    assertThat(budget.flushes()).isEqualTo(1);
    assertThat(budget.held()).isLessThan(82_500L);
    // (the flush is asynchronous: RocksDB's background threads write the file)
    await().atMost(Duration.ofSeconds(30)).until(() -> sstFiles("big") > 0);
    assertThat(sstFiles("middle")).isZero();
    // RocksDB's own figure: the big store's memtable is (nearly) empty, the middle one still holds its writes
    await().atMost(Duration.ofSeconds(30)).until(() -> RocksDBFlusher.memtableBytes(big) < 4_096L);
    assertThat(RocksDBFlusher.memtableBytes(middle)).isGreaterThan(20_000L);
    // and what was written reads back the same
    assertThat(big.get(Bytes.wrap("k399".getBytes(java.nio.charset.StandardCharsets.UTF_8)))).hasSize(100);
  }

  @Test
  void aThreadChecksAtMostEveryHundredMilliseconds() {
    // Given a budget just exceeded once (one flush)
    context(20_000);
    KeyValueStore<Bytes, byte[]> a = keyValue("a");
    KeyValueStore<Bytes, byte[]> b = keyValue("b");
    write(a, 200, 100);
    assertThat(budget.flushes()).isEqualTo(1);

    // When it is exceeded again within 100 ms: no flush yet
    write(b, 200, 100);
    assertThat(budget.flushes()).isEqualTo(1);
    assertThat(budget.held()).isGreaterThan(20_000L);
    // Then the first call after 100 ms (a read) relieves it
    clock.addAndGet(MemtableBudget.CHECK_INTERVAL_MS);
    b.get(Bytes.wrap(new byte[] {1}));
    assertThat(budget.flushes()).isEqualTo(2);
    assertThat(budget.held()).isLessThanOrEqualTo(15_000L);
  }

  @Test
  void aStoreLastWrittenByAnotherThreadIsLeftToThatThread() throws InterruptedException {
    // Given a store written by another thread holding most of the budget
    context(50_000);
    KeyValueStore<Bytes, byte[]> theirs = keyValue("theirs");
    KeyValueStore<Bytes, byte[]> mine = keyValue("mine");
    Thread other = new Thread(() -> write(theirs, 300, 100));
    other.start();
    other.join();
    assertThat(budget.flushes()).isZero();

    // When this thread writes past the budget
    write(mine, 50, 100);

    // Then only its own store is flushed, never one another thread may be using: theirs still holds ~45 kB
    assertThat(budget.flushes()).isEqualTo(1);
    assertThat(budget.held()).isGreaterThan(45_000L);
  }

  @Test
  void withoutABudgetNothingIsFlushedAndClosingForgetsTheStore() {
    context(0);
    KeyValueStore<Bytes, byte[]> store = keyValue("plain");
    write(store, 1_000, 1_000);
    assertThat(budget.flushes()).isZero();
    assertThat(budget.held()).isGreaterThan(1_000_000L);
    store.close();
    opened.remove(store);
    assertThat(budget.held()).isZero();
  }

  @Test
  void theWindowStoreCountsEveryPutAndFlushesAllItsSegments() throws IOException {
    context(30_000);
    WindowStore<Bytes, byte[]> store = window("segments");
    for (int i = 0; i < 300; i++) {
      store.put(Bytes.wrap(("k" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8)), new byte[100],
          i * 1_000L);
    }
    assertThat(budget.flushes()).isPositive();
    await().atMost(Duration.ofSeconds(30)).until(() -> sstFiles("segments") > 0);
  }

  @Test
  void aFlushHandsTheStoresCommittedOffsetBackUnchanged() {
    // Given a store whose committed changelog offset is 42 (as Kafka Streams records it at a commit)
    context(20_000);
    KeyValueStore<Bytes, byte[]> store = keyValue("offsets");
    TopicPartition changelog = new TopicPartition("budget-test-offsets-changelog", 0);
    store.commit(java.util.Map.of(changelog, 42L));

    // When the budget flushes it
    write(store, 300, 100);
    assertThat(budget.flushes()).isPositive();

    // Then the offset is still 42
    assertThat(store.committedOffset(changelog)).isEqualTo(42L);
  }
}
