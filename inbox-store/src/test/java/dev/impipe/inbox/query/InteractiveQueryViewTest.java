package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.query.StateQueryResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The interactive-query shell of one store partition against a scripted {@link ScriptedStreams}: it reads the active
 * store once looked up, answers NOT_OWNER whenever the store is not (or no longer) here, and BEHIND until the store's
 * position has reached the bound, asked once.
 */
class InteractiveQueryViewTest {

  private static final String STORE = "inbox-entries";
  private static final String TOPIC = "im.inbox";
  private static final int PARTITION = 3;

  @TempDir
  Path stateDir;

  private ScriptedStreams streams;

  private final MapStore<String> store = new MapStore<String>().put(key(1), "a").put(key(2), "bb").put(key(3), "ccc")
      .put(key(4), "dddd");

  @AfterEach
  void close() {
    if (streams != null) {
      streams.close();
    }
  }

  @Test
  void readsTheActiveStoreItLookedUpOnce() {
    streams().store(STORE, () -> store);
    InteractiveQueryView<String> view = InteractiveQueryView.of(streams, STORE, PARTITION);

    assertThat(values(view.range(key(1), key(4), false, 10))).containsExactly("a", "bb", "ccc", "dddd");
    assertThat(values(view.range(key(1), key(4), true, 10))).containsExactly("dddd", "ccc", "bb", "a");
    assertThat(values(view.range(key(2), key(4), false, 2))).containsExactly("bb", "ccc");
    assertThat(values(view.range(key(1), key(4), true, 1))).containsExactly("dddd");
    assertThat(view.get(key(3))).contains("ccc");
    assertThat(view.get(key(9))).isEmpty();

    // the store of this partition, looked up once for every read of the view; no position asked without a bound
    assertThat(streams.storeLookups).isEqualTo(1);
    assertThat(streams.lastPartition).isEqualTo(PARTITION);
    assertThat(streams.queriesAsked).isZero();
  }

  @Test
  void aRangeWithAByteBudgetStopsOnceTheEntriesReadWeighMoreThanIt() {
    streams().store(STORE, () -> store);
    InteractiveQueryView<String> view = InteractiveQueryView.of(streams, STORE, PARTITION);

    // 1 + 2 bytes are within 2? no: the second entry is always taken, the third only while under the budget
    assertThat(values(view.range(key(1), key(4), false, 10, String::length, 2))).containsExactly("a", "bb");
    assertThat(values(view.range(key(1), key(4), false, 10, String::length, 3))).containsExactly("a", "bb", "ccc");
    assertThat(values(view.range(key(1), key(4), true, 10, String::length, 100))).containsExactly("dddd", "ccc",
        "bb", "a");
    assertThat(values(view.range(key(1), key(4), false, 1, String::length, 100))).containsExactly("a");
  }

  @Test
  void aStoreThatIsNotHereIsNotOwned() {
    streams().store(STORE, () -> {
      throw new InvalidStateStoreException("migrated");
    });
    InteractiveQueryView<String> view = InteractiveQueryView.of(streams, STORE, PARTITION);

    assertNotOwner(() -> view.get(key(1)), "partition 3 of store inbox-entries cannot be read here now: migrated");
    assertNotOwner(() -> view.range(key(1), key(2), false, 5), "cannot be read here now");
    assertNotOwner(() -> view.range(key(1), key(2), false, 5, String::length, 10), "cannot be read here now");

    streams.store(STORE, () -> {
      throw new IllegalStateException("not running");
    });
    assertNotOwner(() -> InteractiveQueryView.<String>of(streams, STORE, PARTITION).get(key(1)), "not running");
  }

  @Test
  void aStoreClosedUnderAReadIsNotOwnedAndNothingReadIsHandedOut() {
    streams().store(STORE, () -> store);
    InteractiveQueryView<String> view = InteractiveQueryView.of(streams, STORE, PARTITION);
    assertThat(view.get(key(1))).contains("a");

    store.closed = true;

    assertNotOwner(() -> view.get(key(1)), "partition 3 of store inbox-entries cannot be read here now");
    assertNotOwner(() -> view.range(key(1), key(4), false, 10), "the store is closed");
    assertNotOwner(() -> view.range(key(1), key(4), true, 10, String::length, 100), "the store is closed");
  }

  @Test
  void aBoundIsCheckedOnceAgainstTheStoresPositionBeforeAnyRead() {
    long[] applied = {9};
    streams().store(STORE, () -> store).queries(position(req -> {
      QueryResult<Object> r = QueryResult.forResult(null);
      r.setPosition(Position.emptyPosition().withComponent(TOPIC, PARTITION, applied[0])
          .withComponent(TOPIC, PARTITION + 1, 100));
      return r;
    }));
    InteractiveQueryView<String> view = InteractiveQueryView.atLeast(streams, STORE, PARTITION, TOPIC, 10);

    assertThatThrownBy(() -> view.get(key(1))).isInstanceOfSatisfying(NotServableException.class, e -> {
      assertThat(e.reason()).isEqualTo(NotServableException.Reason.BEHIND);
      assertThat(e).hasMessage("store inbox-entries of partition 3 has applied im.inbox up to offset 9, not yet 10");
    });
    assertThat(streams.storeLookups).isZero();

    applied[0] = 10;
    assertThat(view.get(key(1))).contains("a");
    assertThat(view.range(key(1), key(2), false, 5)).hasSize(2);
    assertThat(view.range(key(1), key(2), false, 5, String::length, 10)).hasSize(2);
    // asked twice (behind, then reached), never again once reached
    assertThat(streams.queriesAsked).isEqualTo(2);
  }

  @Test
  void aBoundIsBehindWhileTheStoreHasAppliedNothingOfThePartition() {
    streams().store(STORE, () -> store).queries(position(req -> {
      QueryResult<Object> r = QueryResult.forResult(null);
      r.setPosition(Position.emptyPosition().withComponent(TOPIC, PARTITION + 1, 100));
      return r;
    }));

    assertThatThrownBy(() -> InteractiveQueryView.<String>atLeast(streams, STORE, PARTITION, TOPIC, 0)
        .range(key(1), key(2), false, 5))
        .isInstanceOfSatisfying(NotServableException.class, e -> {
          assertThat(e.reason()).isEqualTo(NotServableException.Reason.BEHIND);
          assertThat(e).hasMessageContaining("up to offset none, not yet 0");
        });
  }

  @Test
  void theProbeIsAQueryNoStoreKnowsSoItsFailureStillCarriesThePosition() {
    streams().store(STORE, () -> store).queries(position(req -> {
      assertThat(req.getQuery()).hasToString("PositionProbe");
      assertThat(req.isRequireActive()).isTrue();
      assertThat(req.getStoreName()).isEqualTo(STORE);
      assertThat(req.getPartitions()).containsExactly(PARTITION);
      QueryResult<Object> r = QueryResult.forFailure(FailureReason.UNKNOWN_QUERY_TYPE, "unknown");
      r.setPosition(Position.emptyPosition().withComponent(TOPIC, PARTITION, 7));
      return r;
    }));

    assertThat(InteractiveQueryView.<String>atLeast(streams, STORE, PARTITION, TOPIC, 7).get(key(2))).contains("bb");
  }

  @Test
  void aPositionOnlyAStandbyOrNoTaskHereCouldGiveIsNotOwned() {
    streams().store(STORE, () -> store).queries(position(req -> {
      QueryResult<Object> r = QueryResult.forFailure(FailureReason.NOT_ACTIVE, "standby");
      r.setPosition(Position.emptyPosition().withComponent(TOPIC, PARTITION, 100));
      return r;
    }));
    assertNotOwner(() -> InteractiveQueryView.<String>atLeast(streams, STORE, PARTITION, TOPIC, 1).get(key(1)),
        "NOT_ACTIVE: standby");

    streams.queries(req -> new StateQueryResult<>());
    assertNotOwner(() -> InteractiveQueryView.<String>atLeast(streams, STORE, PARTITION, TOPIC, 1).get(key(1)),
        "partition 3 of inbox-entries is not here");

    streams.queries(req -> {
      throw new StreamsException("rebalancing");
    });
    assertNotOwner(() -> InteractiveQueryView.<String>atLeast(streams, STORE, PARTITION, TOPIC, 1).get(key(1)),
        "rebalancing");
    assertThat(streams.storeLookups).isZero();
  }

  private ScriptedStreams streams() {
    streams = new ScriptedStreams(stateDir);
    return streams;
  }

  /** Answers every position probe for {@link #PARTITION} with {@code result}. */
  private static Function<StateQueryRequest<?>, StateQueryResult<?>> position(
      Function<StateQueryRequest<?>, QueryResult<Object>> result) {
    return req -> {
      StateQueryResult<Object> out = new StateQueryResult<>();
      out.addResult(PARTITION, result.apply(req));
      return out;
    };
  }

  private static void assertNotOwner(Runnable read, String message) {
    assertThatThrownBy(read::run).isInstanceOfSatisfying(NotServableException.class, e -> {
      assertThat(e.reason()).isEqualTo(NotServableException.Reason.NOT_OWNER);
      assertThat(e).hasMessageContaining(message);
    });
  }

  private static Bytes key(int i) {
    return Bytes.wrap(new byte[] {(byte) i});
  }

  private static List<String> values(List<KeyValue<Bytes, String>> kvs) {
    return kvs.stream().map(kv -> kv.value).toList();
  }
}
