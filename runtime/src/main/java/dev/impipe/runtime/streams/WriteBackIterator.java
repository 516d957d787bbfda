package dev.impipe.runtime.streams;

import java.util.List;
import java.util.NoSuchElementException;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * A {@link WriteBackStore}'s range read: its changes (copies taken when the read began, see
 * {@link HeldValues#range}) over the store below, in key order (reversed when asked), a change replacing the stored
 * value of its key, deleted keys (whose value is null) left out.
 */
final class WriteBackIterator implements KeyValueIterator<Bytes, byte[]> {
  /** In ascending key order; walked from the end when reversed. */
  private final List<KeyValue<Bytes, byte[]>> changes;
  private final KeyValueIterator<Bytes, byte[]> below;
  private final boolean reverse;
  /** How many changes were taken. */
  private int taken;
  private KeyValue<Bytes, byte[]> next;

  WriteBackIterator(List<KeyValue<Bytes, byte[]>> changes, KeyValueIterator<Bytes, byte[]> below, boolean reverse) {
    this.changes = changes;
    this.below = below;
    this.reverse = reverse;
  }

  @Override
  public boolean hasNext() {
    while (next == null && (taken < changes.size() || below.hasNext())) {
      KeyValue<Bytes, byte[]> change = taken < changes.size()
          ? changes.get(reverse ? changes.size() - 1 - taken : taken)
          : null;
      Bytes belowKey = below.hasNext() ? below.peekNextKey() : null;
      int order = change == null ? 1 : belowKey == null ? -1 : change.key.compareTo(belowKey);
      if (reverse && change != null && belowKey != null) {
        order = -order;
      }
      if (order <= 0) {
        if (order == 0) {
          below.next(); // the change replaces it
        }
        taken++;
        if (change.value != null) {
          next = change;
        }
      } else {
        next = below.next();
      }
    }
    return next != null;
  }

  @Override
  public KeyValue<Bytes, byte[]> next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    KeyValue<Bytes, byte[]> out = next;
    next = null;
    return out;
  }

  @Override
  public Bytes peekNextKey() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return next.key;
  }

  @Override
  public void close() {
    below.close();
  }
}
