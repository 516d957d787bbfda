package dev.impipe.notify.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.streams.PunctuationBudget;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A task's pending bursts and their due index over in-memory stores (here: notify 500 ms after a message's entry, at
 * most once per 60 s): one due entry per burst, taken in time order within a punctuation's budget, and no index read
 * for a time already taken.
 */
class BurstIndexTest {

  private static final long AFTER = 500;
  private static final long COALESCE = 60_000;
  private static final NotifyKeys.Burst BOB_PHONE_C1 = new NotifyKeys.Burst("bob", "phone", "c1");
  private static final NotifyKeys.Burst BOB_PHONE_C2 = new NotifyKeys.Burst("bob", "phone", "c2");

  private final MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
  private final KeyValueStore<Bytes, byte[]> pendingStore = store("pending");
  private final KeyValueStore<Bytes, byte[]> dueStore = store("due");
  /** Calls to each store, by method name. */
  private final Map<String, Integer> pendingCalls = new HashMap<>();
  private final Map<String, Integer> dueCalls = new HashMap<>();
  private final AtomicLong count = new AtomicLong();
  private final List<String> quarantined = new ArrayList<>();
  private final BurstIndex index = new BurstIndex(counting(pendingStore, pendingCalls), counting(dueStore, dueCalls),
      count, AFTER, COALESCE, (store, key, stored, user, e) -> quarantined.add(store + "/" + user));

  private KeyValueStore<Bytes, byte[]> store(String name) {
    KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.Bytes(),
        Serdes.ByteArray()).withLoggingDisabled().build();
    s.init(context.getStateStoreContext(), s);
    return s;
  }

  @SuppressWarnings("unchecked")
  private static KeyValueStore<Bytes, byte[]> counting(KeyValueStore<Bytes, byte[]> store, Map<String, Integer> calls) {
    return (KeyValueStore<Bytes, byte[]>) Proxy.newProxyInstance(KeyValueStore.class.getClassLoader(),
        new Class<?>[] {KeyValueStore.class}, (proxy, method, args) -> {
          calls.merge(method.getName(), 1, Integer::sum);
          try {
            return method.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @AfterEach
  void tearDown() {
    pendingStore.close();
    dueStore.close();
  }

  private static PendingBurst messageAt(long entryAt) {
    return PendingBurst.empty().add(new PendingBurst.Message(1, 10, "m1", "alice", entryAt), "hi", 10);
  }

  private static PunctuationBudget.Lease plenty() {
    return new PunctuationBudget(1_000, 60_000, 100).lease(0);
  }

  private static NotifyKeys.Due due(long at, NotifyKeys.Burst t) {
    return new NotifyKeys.Due(at, t.userId(), t.deviceId(), t.conversationId());
  }

  @Test
  void aNewBurstIsDueItsDelayAfterItsFirstMessageAndTakenOnceThen() {
    // Given a message entered at 1_000
    index.write(BOB_PHONE_C1, null, messageAt(1_000), 1_000);
    assertThat(count).hasValue(1);
    assertThat(index.load(BOB_PHONE_C1)).isEqualTo(messageAt(1_000).withDue(1_500));
    assertThat(index.of("bob", "phone")).containsExactly(BOB_PHONE_C1);

    // When the punctuations reach 1_499, then 1_500
    assertThat(index.takeDue(1_499, plenty())).isEqualTo(new BurstIndex.DueBatch(List.of(), false));
    assertThat(index.takeDue(1_500, plenty()))
        .isEqualTo(new BurstIndex.DueBatch(List.of(due(1_500, BOB_PHONE_C1)), false));

    // Then the entry is out of the index (the burst stays for the caller to decide)
    assertThat(index.takeDue(2_000, plenty()).due()).isEmpty();
    assertThat(index.load(BOB_PHONE_C1)).isNotNull();
  }

  @Test
  void aTimeAlreadyTakenIsNotReadAgainButOneAddedAtTheNextTimeIsFound() {
    index.takeDue(1_000, plenty());
    int reads = dueCalls.getOrDefault("range", 0);

    // Nothing was added at or before 1_000 since: no index read
    assertThat(index.takeDue(1_000, plenty()).due()).isEmpty();
    assertThat(dueCalls.getOrDefault("range", 0)).isEqualTo(reads);

    // A burst due at 1_001, right after the last time taken
    index.write(BOB_PHONE_C1, null, messageAt(501), 1_000);
    assertThat(index.takeDue(1_001, plenty()).due()).containsExactly(due(1_001, BOB_PHONE_C1));
  }

  @Test
  void aBurstDueBeforeTheLastTimeTakenIsStillFound() {
    index.takeDue(5_000, plenty());

    index.write(BOB_PHONE_C1, null, messageAt(1_000), 5_000);

    assertThat(index.takeDue(5_000, plenty()).due()).containsExactly(due(1_500, BOB_PHONE_C1));
  }

  @Test
  void aRoundCutByItsBudgetResumesWhereItStopped() {
    index.write(BOB_PHONE_C1, null, messageAt(1_000), 1_000);
    index.write(BOB_PHONE_C2, null, messageAt(1_100), 1_100);
    PunctuationBudget oneAtATime = new PunctuationBudget(1, 60_000, 100);

    assertThat(index.takeDue(5_000, oneAtATime.lease(5_000)))
        .isEqualTo(new BurstIndex.DueBatch(List.of(due(1_500, BOB_PHONE_C1)), true));
    // The next window of the budget
    assertThat(index.takeDue(5_100, oneAtATime.lease(5_100)))
        .isEqualTo(new BurstIndex.DueBatch(List.of(due(1_600, BOB_PHONE_C2)), false));
  }

  @Test
  void aBurstWrittenUnchangedWritesNothing() {
    index.write(BOB_PHONE_C1, null, messageAt(1_000), 1_000);
    PendingBurst stored = index.load(BOB_PHONE_C1);
    Map<String, Integer> pendingBefore = Map.copyOf(pendingCalls);
    Map<String, Integer> dueBefore = Map.copyOf(dueCalls);

    index.write(BOB_PHONE_C1, stored, stored, 2_000);

    assertThat(pendingCalls).isEqualTo(pendingBefore);
    assertThat(dueCalls).isEqualTo(dueBefore);
  }

  @Test
  void aBurstThatMovesLeavesOneDueEntryAndOneWithNothingToWaitForGoes() {
    index.write(BOB_PHONE_C1, null, messageAt(1_000), 1_000);
    PendingBurst stored = index.load(BOB_PHONE_C1);

    // Notified at 1_500 with nothing left: kept until the coalescing window ends at 61_500
    index.write(BOB_PHONE_C1, stored, stored.notified(1_500), 1_500);
    assertThat(count).hasValue(1);
    assertThat(index.takeDue(61_000, plenty()).due()).isEmpty();
    assertThat(index.takeDue(61_500, plenty()).due()).containsExactly(due(61_500, BOB_PHONE_C1));

    // Then at the window's end it has nothing to wait for
    PendingBurst windowOnly = index.load(BOB_PHONE_C1);
    index.write(BOB_PHONE_C1, windowOnly, windowOnly.cleared(), 61_500);
    assertThat(index.load(BOB_PHONE_C1)).isNull();
    assertThat(count).hasValue(0);
    assertThat(dueStore.approximateNumEntries()).isZero();
  }

  @Test
  void aDueKeyThatDoesNotDecodeIsQuarantinedAndRemoved() {
    index.write(BOB_PHONE_C1, null, messageAt(1_000), 1_000);
    dueStore.put(NotifyKeys.dueStart(1_200), NotifyKeys.EMPTY);

    assertThat(index.takeDue(2_000, plenty()).due()).containsExactly(due(1_500, BOB_PHONE_C1));

    assertThat(quarantined).containsExactly(NotifyTopology.DUE_STORE + "/null");
    assertThat(dueStore.get(NotifyKeys.dueStart(1_200))).isNull();
  }

  @Test
  void aBurstThatDoesNotDecodeIsQuarantinedAndForgotten() {
    index.write(BOB_PHONE_C1, null, messageAt(1_000), 1_000);
    pendingStore.put(NotifyKeys.pending("bob", "phone", "c1"), new byte[] {9, 9});

    assertThat(index.load(BOB_PHONE_C1)).isNull();

    assertThat(quarantined).containsExactly(NotifyTopology.PENDING_STORE + "/bob");
    assertThat(pendingStore.get(NotifyKeys.pending("bob", "phone", "c1"))).isNull();
    assertThat(count).hasValue(0);
  }
}
