package dev.impipe.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.StoredValues;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * The timeline materialiser as a processor on a mock context with in-memory stores (no driver): the per-owner cap
 * and the retention sweep's counts.
 */
class TimelineMaterialiserTest {

  private static final long RETENTION = 1_000;
  private static final long SWEEP_INTERVAL = 100;
  /** More store calls than any test here makes (the biggest writes about 4,000 entries). */
  private static final int MAX_CALLS = 100_000;

  private final MockProcessorContext<byte[], byte[]> context = new MockProcessorContext<>();
  private final Map<String, List<String>> calls = new HashMap<>();
  private final KeyValueStore<Bytes, String> entries = store("entries", Serdes.String());
  private final KeyValueStore<Bytes, byte[]> index = store("index", Serdes.ByteArray());
  private final KeyValueStore<Bytes, Long> counts = store("counts", Serdes.Long());
  private long offset;

  @Test
  void aSpecWithACapNeedsACountStore() {
    TimelineMaterialiser.Builder<String> noCounts = TimelineMaterialiser.Spec.<String>builder()
        .entryStore("entries").timeIndexStore("index").owner(v -> v, "owner");
    assertThat(noCounts.maxPerOwner(0).build().countStore()).isNull();
    assertThatThrownBy(() -> noCounts.maxPerOwner(1).build()).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void anOwnerAtTheCapKeepsEverythingAndBeyondItTheOldestGo() {
    // Given a cap of two entries per owner
    TimelineMaterialiser<String> m = materialiser(2);
    // When bob gets two entries: both kept
    put(m, "bob", 10);
    put(m, "bob", 11);
    assertThat(seqs("bob")).containsExactly(0L, 1L);
    assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(2);
    // When a third comes: the oldest goes, two are counted
    put(m, "bob", 12);
    assertThat(seqs("bob")).containsExactly(1L, 2L);
    assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(2);
  }

  @Test
  void anOwnerFarOverTheCapShrinksByOneEntryPerNewOne() {
    // Given bob with five entries stored while there was no cap
    TimelineMaterialiser<String> uncapped = materialiser(0);
    for (int i = 0; i < 5; i++) {
      put(uncapped, "bob", 10 + i);
    }
    // When the cap is two and a sixth comes: at most two evicted, five left
    put(materialiser(2), "bob", 20);
    assertThat(seqs("bob")).containsExactly(2L, 3L, 4L, 5L);
    assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(4);
  }

  @Test
  void anOwnerUpToTheCapCostsNoReadOfTheirEntries() {
    // Given a cap of two entries per owner
    TimelineMaterialiser<String> m = materialiser(2);
    // When bob gets his first two: no range read (nothing to evict)
    put(m, "bob", 10);
    put(m, "bob", 11);
    assertThat(calls.get("entries")).doesNotContain("range");
    // When the third comes: one range read, of the one entry evicted
    put(m, "bob", 12);
    assertThat(readsPerRange("entries")).containsExactly(1);
  }

  @Test
  void aSweepBeforeOneRetentionHasPassedReadsNothing() {
    // Given an entry at t = 0
    TimelineMaterialiser<String> m = materialiser(0);
    put(m, "bob", 0);
    calls.get("index").clear();
    // When the sweep runs exactly one retention later (nothing can be older than t = 0)
    sweep(RETENTION);
    // Then it does not read the time index, and the entry stays
    assertThat(calls.get("index")).doesNotContain("range");
    assertThat(seqs("bob")).containsExactly(0L);
  }

  @Test
  void aSweepReadsTheTimeIndexOneBatchAtATime() {
    // Given one more expired entry than a batch
    TimelineMaterialiser<String> m = materialiser(0);
    for (int i = 0; i <= TimelineMaterialiser.SWEEP_BATCH; i++) {
      put(m, "bob", 10);
    }
    calls.get("index").clear();
    // When the sweep runs: a full batch, then the one left
    sweep(2_000);
    assertThat(readsPerRange("index")).containsExactly(TimelineMaterialiser.SWEEP_BATCH, 1);
  }

  @Test
  void theSweepRemovesExpiredEntriesAndTheirCountsButNotTheCountOfOnesTheCapEvicted() {
    // Given a cap of three: bob's first entry is evicted by his fourth; amy has an old and a recent entry
    TimelineMaterialiser<String> m = materialiser(3);
    put(m, "bob", 10);
    put(m, "bob", 11);
    put(m, "bob", 1_500);
    put(m, "bob", 1_600);
    put(m, "amy", 13);
    put(m, "amy", 1_500);
    // When the sweep runs at t = 2,000 (retention 1,000: entries before t = 1,000 expire)
    sweep(2_000);
    // Then each keeps its recent entries, counted once; the evicted entry's expiry took nothing off bob's count
    assertThat(seqs("bob")).containsExactly(2L, 3L);
    assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(2);
    assertThat(seqs("amy")).containsExactly(5L);
    assertThat(counts.get(StoreKeys.owner("amy"))).isEqualTo(1);
    // and all of it in one run: no catch-up scheduled
    assertThat(context.scheduledPunctuators()).hasSize(1);
  }

  @Test
  void aSweepOfMoreThanOneBatchRunsToTheEndAndAnOwnerWithNothingLeftHasNoCount() {
    // Given one more expired entry than a sweep reads at a time
    TimelineMaterialiser<String> m = materialiser(0);
    for (int i = 0; i <= TimelineMaterialiser.SWEEP_BATCH; i++) {
      put(m, "bob", 10);
    }
    // When the sweep runs: all go in this run, and so does bob's count
    sweep(2_000);
    assertThat(seqs("bob")).isEmpty();
    assertThat(counts.get(StoreKeys.owner("bob"))).isNull();
    assertThat(context.scheduledPunctuators()).hasSize(1);
  }

  @Test
  void aSweepBeyondItsBudgetGoesOnInACatchUpRunThatEndsWhenDone() {
    // Given a budget of three entries per run (three writes each) and five expired entries
    TimelineMaterialiser<String> m = materialiser(0, new PunctuationBudget(
        3 * TimelineMaterialiser.WRITES_PER_ENTRY, 10_000, PunctuationBudget.DEFAULT_WINDOW_MS));
    for (int i = 0; i < 5; i++) {
      put(m, "bob", 10);
    }
    // When the sweep runs: three go, and a catch-up run is scheduled
    sweep(2_000);
    assertThat(seqs("bob")).containsExactly(3L, 4L);
    assertThat(counts.get(StoreKeys.owner("bob"))).isEqualTo(2);
    assertThat(context.scheduledPunctuators()).hasSize(2);
    MockProcessorContext.CapturedPunctuator catchUp = context.scheduledPunctuators().get(1);
    assertThat(catchUp.getInterval().toMillis()).isEqualTo(TimelineMaterialiser.CATCH_UP_MS);
    // When it runs in the next budget window: the rest go and the catch-up is cancelled
    context.setCurrentSystemTimeMs(2_000 + PunctuationBudget.DEFAULT_WINDOW_MS);
    catchUp.getPunctuator().punctuate(2_000 + PunctuationBudget.DEFAULT_WINDOW_MS);
    assertThat(seqs("bob")).isEmpty();
    assertThat(catchUp.cancelled()).isTrue();
  }

  @Test
  void aStoredEntryThatDoesNotDecodeIsDeletedAndForwardedToTheRejectedChild() {
    // Given an expired entry whose stored bytes no longer decode
    KeyValueStore<Bytes, String> fragile = store("fragile", StoredValues.quarantining(Serdes.serdeFrom(
        Serdes.String().serializer(), (topic, data) -> {
          throw new SerializationException("unknown schema");
        })));
    TimelineMaterialiser<String> m = new TimelineMaterialiser<>(TimelineMaterialiser.Spec.<String>builder()
        .entryStore("fragile").timeIndexStore("index").countStore("counts").owner(v -> v, "owner")
        .retention(RETENTION, SWEEP_INTERVAL, true).build(), budget(), "rejected");
    m.init(context);
    put(m, "bob", 10);
    // When the sweep runs: it is gone from the store and its count, and forwarded to the rejected child
    sweep(2_000);
    assertThat(fragile.approximateNumEntries()).isZero();
    assertThat(counts.get(StoreKeys.owner("bob"))).isNull();
    assertThat(context.forwarded()).hasSize(1);
    assertThat(context.forwarded().get(0).childName()).hasValue("rejected");
  }

  private void sweep(long now) {
    context.setCurrentSystemTimeMs(now);
    context.scheduledPunctuators().get(0).getPunctuator().punctuate(now);
  }

  private static PunctuationBudget budget() {
    return new PunctuationBudget(30_000, 10_000, PunctuationBudget.DEFAULT_WINDOW_MS);
  }

  private TimelineMaterialiser<String> materialiser(long cap) {
    return materialiser(cap, budget());
  }

  private TimelineMaterialiser<String> materialiser(long cap, PunctuationBudget budget) {
    TimelineMaterialiser<String> m = new TimelineMaterialiser<>(TimelineMaterialiser.Spec.<String>builder()
        .entryStore("entries").timeIndexStore("index").countStore("counts").owner(v -> v, "owner")
        .retention(RETENTION, SWEEP_INTERVAL, true).maxPerOwner(cap).build(), budget, null);
    m.init(context);
    return m;
  }

  private void put(TimelineMaterialiser<String> m, String owner, long timestamp) {
    context.setRecordMetadata("timeline", 0, offset++);
    m.process(new Record<>(owner, owner, timestamp));
  }

  private List<Long> seqs(String owner) {
    List<Long> out = new ArrayList<>();
    try (KeyValueIterator<Bytes, String> it = entries.range(StoreKeys.entry(owner, 0),
        StoreKeys.entry(owner, Long.MAX_VALUE))) {
      while (it.hasNext()) {
        KeyValue<Bytes, String> kv = it.next();
        out.add(StoreKeys.entrySeq(kv.key));
      }
    }
    return out;
  }

  private <V> KeyValueStore<Bytes, V> store(String name, org.apache.kafka.common.serialization.Serde<V> serde) {
    KeyValueBytesStoreSupplier inMemory = Stores.inMemoryKeyValueStore(name);
    List<String> log = calls.computeIfAbsent(name, n -> new ArrayList<>());
    KeyValueBytesStoreSupplier recorded = new KeyValueBytesStoreSupplier() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public KeyValueStore<Bytes, byte[]> get() {
        return recording(inMemory.get(), log);
      }

      @Override
      public String metricsScope() {
        return inMemory.metricsScope();
      }
    };
    KeyValueStore<Bytes, V> store = Stores.keyValueStoreBuilder(recorded, Serdes.Bytes(), serde)
        .withLoggingDisabled().build();
    store.init(context.getStateStoreContext(), store);
    return store;
  }

  /**
   * {@code store} with the name of each call added to {@code log}, and a {@code next} for each entry read from an
   * iterator it returned: what the materialiser reads.
   */
  @SuppressWarnings("unchecked")
  private static KeyValueStore<Bytes, byte[]> recording(KeyValueStore<Bytes, byte[]> store, List<String> log) {
    return (KeyValueStore<Bytes, byte[]>) Proxy.newProxyInstance(KeyValueStore.class.getClassLoader(),
        new Class<?>[] {KeyValueStore.class}, (proxy, method, args) -> {
          log.add(method.getName());
          if (log.size() > MAX_CALLS) {
            // a sweep that stops advancing fails at once instead of running into a timeout
            throw new IllegalStateException("more than " + MAX_CALLS + " calls: a loop that does not advance");
          }
          Object result = invoke(method, store, args);
          if (!(result instanceof KeyValueIterator<?, ?> it)) {
            return result;
          }
          return Proxy.newProxyInstance(KeyValueIterator.class.getClassLoader(),
              new Class<?>[] {KeyValueIterator.class}, (p, m, a) -> {
                if (m.getName().equals("next")) {
                  log.add("next");
                }
                return invoke(m, it, a);
              });
        });
  }

  private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** How many entries each range read of {@code store} since the last {@link List#clear()} went on to read. */
  private List<Integer> readsPerRange(String store) {
    List<Integer> out = new ArrayList<>();
    for (String call : calls.get(store)) {
      if (call.equals("range")) {
        out.add(0);
      } else if (call.equals("next")) {
        out.set(out.size() - 1, out.get(out.size() - 1) + 1);
      }
    }
    return out;
  }
}
