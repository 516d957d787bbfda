package dev.impipe.runtime.streams;

import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;

/**
 * What the store wrappers of {@link MemtableBudget} share: every call goes to the Kafka Streams store inside (its life
 * cycle and offsets here); writes are counted, and any call lets the thread relieve the budget.
 */
abstract class Budgeted implements StateStore {
  private final StateStore inner;
  private final MemtableBudget budget;
  MemtableBudget.Tracked tracked;

  Budgeted(StateStore inner, MemtableBudget budget) {
    this.inner = inner;
    this.budget = budget;
  }

  @Override
  public String name() {
    return inner.name();
  }

  /** The Kafka Streams store inside. */
  StateStore inner() {
    return inner;
  }

  @Override
  public void init(StateStoreContext context, StateStore root) {
    inner.init(context, root);
    budget.configure(context);
    tracked = budget.track(inner);
  }

  @Override
  @SuppressWarnings("deprecation")
  public void flush() {
    inner.flush();
  }

  @Override
  public void commit(Map<TopicPartition, Long> changelogOffsets) {
    inner.commit(changelogOffsets);
  }

  @Override
  public Long committedOffset(TopicPartition partition) {
    return inner.committedOffset(partition);
  }

  @Override
  @SuppressWarnings("deprecation") // Kafka Streams still asks it of every store (KIP-1035)
  public boolean managesOffsets() {
    return inner.managesOffsets();
  }

  @Override
  public void close() {
    if (tracked == null) {
      inner.close();
    } else {
      tracked.close();
    }
  }

  @Override
  public boolean persistent() {
    return inner.persistent();
  }

  @Override
  public boolean isOpen() {
    return inner.isOpen();
  }

  @Override
  public <R> QueryResult<R> query(Query<R> query, PositionBound positionBound, QueryConfig config) {
    return inner.query(query, positionBound, config);
  }

  @Override
  public Position getPosition() {
    return inner.getPosition();
  }

  void wrote(Bytes key, byte[] value) {
    tracked.wrote(key.get().length, value == null ? 0 : value.length);
  }

  <T> T read(T result) {
    tracked.touched();
    return result;
  }
}
