package dev.impipe.inbox.query;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.ToLongFunction;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * One partition of a store of this instance. Only an active task in a running thread answers (never a standby or a
 * restoring store: no stale or partial data); anything else throws {@link NotServableException}, which the router
 * turns into a forward, a retry or a 503.
 *
 * <p>Data is read through {@code KafkaStreams#store} (active stores of running threads only), the store's position
 * through an IQv2 request the store does not know. Kafka Streams 4.3.1 answers an IQv2 key or range query under
 * the store's position lock and then takes the store's own lock, while a processor's {@code put} takes them the
 * other way round: a sync racing a cursor commit deadlocked both (KAFKA-19629, seen here as a sync that never
 * answered). The probe below takes only the position lock and the reads only the store lock.
 */
public final class InteractiveQueryView<V> implements StoreView<V> {

  /** A query no store knows: the store answers it under its position lock alone, with its position. */
  static final class PositionProbe implements Query<Void> {
    static final PositionProbe INSTANCE = new PositionProbe();

    private PositionProbe() {
    }

    @Override
    public String toString() {
      return "PositionProbe";
    }
  }

  private final KafkaStreams streams;
  private final String store;
  private final int partition;
  /** Source topic of the bound, null when unbounded. */
  private final String boundTopic;
  private final long boundOffset;
  private boolean boundChecked;
  private ReadOnlyKeyValueStore<Bytes, V> local;

  private InteractiveQueryView(KafkaStreams streams, String store, int partition, String boundTopic,
      long boundOffset) {
    this.streams = streams;
    this.store = store;
    this.partition = partition;
    this.boundTopic = boundTopic;
    this.boundOffset = boundOffset;
  }

  /** Reads whatever the store holds. */
  public static <V> InteractiveQueryView<V> of(KafkaStreams streams, String store, int partition) {
    return new InteractiveQueryView<>(streams, store, partition, null, -1);
  }

  /**
   * Reads only once the store has applied the record at {@code offset} of {@code topic} (this partition); until
   * then every read throws {@link NotServableException.Reason#BEHIND}.
   */
  public static <V> InteractiveQueryView<V> atLeast(KafkaStreams streams, String store, int partition,
      String topic, long offset) {
    return new InteractiveQueryView<>(streams, store, partition, topic, offset);
  }

  @Override
  public List<KeyValue<Bytes, V>> range(Bytes from, Bytes to, boolean descending, int max) {
    checkBound();
    List<KeyValue<Bytes, V>> out = new ArrayList<>();
    try {
      ReadOnlyKeyValueStore<Bytes, V> kv = local();
      try (KeyValueIterator<Bytes, V> it = descending ? kv.reverseRange(from, to) : kv.range(from, to)) {
        while (it.hasNext() && out.size() < max) {
          out.add(it.next());
        }
      }
    } catch (InvalidStateStoreException e) {
      // The store was closed under us (the task migrated mid-read): never hand out what was read so far.
      throw notOwner(e);
    }
    return out;
  }

  @Override
  public List<KeyValue<Bytes, V>> range(Bytes from, Bytes to, boolean descending, int max, ToLongFunction<V> size,
      long maxBytes) {
    checkBound();
    try {
      ReadOnlyKeyValueStore<Bytes, V> kv = local();
      try (KeyValueIterator<Bytes, V> it = descending ? kv.reverseRange(from, to) : kv.range(from, to)) {
        return StoreView.take(it, max, size, maxBytes);
      }
    } catch (InvalidStateStoreException e) {
      // The store was closed under us (the task migrated mid-read): never hand out what was read so far.
      throw notOwner(e);
    }
  }

  @Override
  public Optional<V> get(Bytes key) {
    checkBound();
    try {
      return Optional.ofNullable(local().get(key));
    } catch (InvalidStateStoreException e) {
      throw notOwner(e);
    }
  }

  /** The partition's store if an active task of a running thread here holds it (IQv1 without stale stores). */
  private ReadOnlyKeyValueStore<Bytes, V> local() {
    if (local == null) {
      try {
        local = streams.store(StoreQueryParameters
            .fromNameAndType(store, QueryableStoreTypes.<Bytes, V>keyValueStore()).withPartition(partition));
      } catch (StreamsException | IllegalStateException e) {
        throw notOwner(e);
      }
    }
    return local;
  }

  private NotServableException notOwner(RuntimeException e) {
    return new NotServableException(NotServableException.Reason.NOT_OWNER, "partition " + partition + " of store "
        + store + " cannot be read here now: " + e.getMessage());
  }

  /**
   * Throws {@link NotServableException.Reason#BEHIND} unless the store has applied the bound's record. Checked
   * before the data is read, never after: a store writes a record before advancing its position, so every read
   * that starts after this check sees that record. (IQv2's own {@code PositionBound} cannot be used here:
   * {@code KafkaStreams#query} drops it for {@code requireActive()} requests, and without requireActive a standby
   * or a still-restoring copy could answer.)
   */
  private void checkBound() {
    if (boundTopic == null || boundChecked) {
      return;
    }
    Position position = position();
    Long seen = position == null ? null : position.getPartitionPositions(boundTopic).get(partition);
    if (seen == null || seen < boundOffset) {
      throw new NotServableException(NotServableException.Reason.BEHIND, "store " + store + " of partition "
          + partition + " has applied " + boundTopic + " up to offset " + (seen == null ? "none" : seen)
          + ", not yet " + boundOffset);
    }
    boundChecked = true;
  }

  /** The store's position, asked of the active task of a running thread here; NOT_OWNER when there is none. */
  private Position position() {
    StateQueryRequest<Void> request = StateQueryRequest.inStore(store).withQuery(PositionProbe.INSTANCE)
        .withPartitions(Set.of(partition)).requireActive();
    QueryResult<Void> result;
    try {
      result = streams.query(request).getPartitionResults().get(partition);
    } catch (StreamsException | IllegalStateException e) {
      throw notOwner(e);
    }
    if (result == null) {
      throw new NotServableException(NotServableException.Reason.NOT_OWNER, "partition " + partition + " of "
          + store + " is not here");
    }
    if (result.isFailure() && result.getFailureReason() != FailureReason.UNKNOWN_QUERY_TYPE) {
      throw new NotServableException(NotServableException.Reason.NOT_OWNER, result.getFailureReason() + ": "
          + result.getFailureMessage());
    }
    return result.getPosition();
  }
}
