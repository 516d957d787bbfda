package dev.impipe.inbox.query;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.RangeQuery;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * One partition of a store of this instance, read through IQv2. Only an active task in a running thread answers
 * (never a standby or a restoring store: no stale or partial data); anything else throws
 * {@link NotServableException}, which the router turns into a forward, a retry or a 503.
 */
public final class InteractiveQueryView<V> implements StoreView<V> {

  private final KafkaStreams streams;
  private final String store;
  private final int partition;
  private final PositionBound bound;

  private InteractiveQueryView(KafkaStreams streams, String store, int partition, PositionBound bound) {
    this.streams = streams;
    this.store = store;
    this.partition = partition;
    this.bound = bound;
  }

  /** Reads whatever the store holds. */
  public static <V> InteractiveQueryView<V> of(KafkaStreams streams, String store, int partition) {
    return new InteractiveQueryView<>(streams, store, partition, PositionBound.unbounded());
  }

  /** Reads only once the store has applied the record at {@code offset} of {@code topic} (this partition). */
  public static <V> InteractiveQueryView<V> atLeast(KafkaStreams streams, String store, int partition,
      String topic, long offset) {
    PositionBound bound = PositionBound.at(Position.fromMap(Map.of(topic, Map.of(partition, offset))));
    return new InteractiveQueryView<>(streams, store, partition, bound);
  }

  @Override
  public List<KeyValue<Bytes, V>> range(Bytes from, Bytes to, boolean descending, int max) {
    RangeQuery<Bytes, V> query = RangeQuery.withRange(from, to);
    if (descending) {
      query = query.withDescendingKeys();
    }
    List<KeyValue<Bytes, V>> out = new ArrayList<>();
    try (KeyValueIterator<Bytes, V> it = run(query)) {
      while (it.hasNext() && out.size() < max) {
        out.add(it.next());
      }
    } catch (InvalidStateStoreException e) {
      // The store was closed under us (the task migrated mid-read): never hand out what was read so far.
      throw new NotServableException(NotServableException.Reason.NOT_OWNER, "store " + store + " closed: "
          + e.getMessage());
    }
    return out;
  }

  @Override
  public Optional<V> get(Bytes key) {
    return Optional.ofNullable(run(KeyQuery.<Bytes, V>withKey(key)));
  }

  private <R> R run(Query<R> query) {
    StateQueryRequest<R> request = StateQueryRequest.inStore(store).withQuery(query)
        .withPartitions(Set.of(partition)).withPositionBound(bound).requireActive();
    QueryResult<R> result;
    try {
      result = streams.query(request).getPartitionResults().get(partition);
    } catch (StreamsException | IllegalStateException e) {
      throw new NotServableException(NotServableException.Reason.NOT_OWNER, "store " + store
          + " cannot be queried now: " + e.getMessage());
    }
    if (result == null) {
      throw new NotServableException(NotServableException.Reason.NOT_OWNER, "partition " + partition + " of "
          + store + " is not here");
    }
    if (result.isFailure()) {
      NotServableException.Reason reason = result.getFailureReason() == FailureReason.NOT_UP_TO_BOUND
          ? NotServableException.Reason.BEHIND : NotServableException.Reason.NOT_OWNER;
      throw new NotServableException(reason, result.getFailureReason() + ": " + result.getFailureMessage());
    }
    return result.getResult();
  }
}
