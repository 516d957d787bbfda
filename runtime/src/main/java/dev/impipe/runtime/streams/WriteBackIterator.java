package dev.impipe.runtime.streams;

import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * A {@link WriteBackStore}'s range read: its changes over the store below, in key order (reversed when asked), a
 * change replacing the stored value of its key, deleted keys (whose bytes are null) left out.
 *
 * @param <C> a change, made bytes by the function given
 */
final class WriteBackIterator<C> implements KeyValueIterator<Bytes, byte[]> {
  private final Iterator<Map.Entry<Bytes, C>> changes;
  private final KeyValueIterator<Bytes, byte[]> below;
  private final boolean reverse;
  private final Function<C, byte[]> encode;
  private Map.Entry<Bytes, C> change;
  private KeyValue<Bytes, byte[]> next;

  WriteBackIterator(NavigableMap<Bytes, C> changes, KeyValueIterator<Bytes, byte[]> below, boolean reverse,
      Function<C, byte[]> encode) {
    this.changes = changes.entrySet().iterator();
    this.below = below;
    this.reverse = reverse;
    this.encode = encode;
    this.change = this.changes.hasNext() ? this.changes.next() : null;
  }

  @Override
  public boolean hasNext() {
    while (next == null && (change != null || below.hasNext())) {
      Bytes belowKey = below.hasNext() ? below.peekNextKey() : null;
      int order = change == null ? 1 : belowKey == null ? -1 : change.getKey().compareTo(belowKey);
      if (reverse && change != null && belowKey != null) {
        order = -order;
      }
      if (order <= 0) {
        if (order == 0) {
          below.next(); // the change replaces it
        }
        Map.Entry<Bytes, C> c = change;
        change = changes.hasNext() ? changes.next() : null;
        byte[] value = encode.apply(c.getValue());
        if (value != null) {
          next = KeyValue.pair(c.getKey(), value);
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
