package dev.impipe.inbox.query;

import java.util.ArrayList;
import java.util.List;
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

  /** No store key is empty (see StoreKeys): a lookup of it only fetches the store's position. */
  private static final Bytes NO_SUCH_KEY = Bytes.wrap(new byte[0]);

  private final KafkaStreams streams;
  private final String store;
  private final int partition;
  /** Source topic of the bound, null when unbounded. */
  private final String boundTopic;
  private final long boundOffset;
  private boolean boundChecked;

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
    checkBound();
    return Optional.ofNullable(run(KeyQuery.<Bytes, V>withKey(key)));
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
    QueryResult<V> probe = result(KeyQuery.<Bytes, V>withKey(NO_SUCH_KEY));
    Position position = probe.getPosition();
    Long seen = position == null ? null : position.getPartitionPositions(boundTopic).get(partition);
    if (seen == null || seen < boundOffset) {
      throw new NotServableException(NotServableException.Reason.BEHIND, "store " + store + " of partition "
          + partition + " has applied " + boundTopic + " up to offset " + (seen == null ? "none" : seen)
          + ", not yet " + boundOffset);
    }
    boundChecked = true;
  }

  private <R> R run(Query<R> query) {
    return result(query).getResult();
  }

  private <R> QueryResult<R> result(Query<R> query) {
    StateQueryRequest<R> request = StateQueryRequest.inStore(store).withQuery(query)
        .withPartitions(Set.of(partition)).requireActive();
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
    return result;
  }
}
