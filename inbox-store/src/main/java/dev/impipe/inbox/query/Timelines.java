package dev.impipe.inbox.query;

import dev.impipe.inbox.internal.StoreKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/** The timeline reads: a user's inbox after a seq (sync), a conversation before a seq (history, newest first). */
public final class Timelines {

  /** Seq meaning "before the first entry": {@code after=-1} reads from the start. */
  public static final long START = -1;

  private Timelines() {}

  /** Entries of {@code owner} with seq greater than {@code after}, ascending, at most {@code limit}. */
  public static <V> Page<V> after(StoreView<V> store, String owner, long after, int limit) {
    if (after == Long.MAX_VALUE) {
      return new Page<>(List.of(), after, false);
    }
    Bytes from = StoreKeys.entry(owner, Math.max(0, after + 1));
    Bytes to = StoreKeys.entry(owner, Long.MAX_VALUE);
    List<KeyValue<Bytes, V>> read = store.range(from, to, false, limit + 1);
    return page(read, limit, after);
  }

  /** Entries of {@code owner} with seq lower than {@code before} (all when absent), newest first. */
  public static <V> Page<V> before(StoreView<V> store, String owner, OptionalLong before, int limit) {
    if (before.isPresent() && before.getAsLong() <= 0) {
      return new Page<>(List.of(), before.getAsLong(), false);
    }
    Bytes from = StoreKeys.entry(owner, 0);
    Bytes to = StoreKeys.entry(owner, before.isPresent() ? before.getAsLong() - 1 : Long.MAX_VALUE);
    List<KeyValue<Bytes, V>> read = store.range(from, to, true, limit + 1);
    return page(read, limit, before.isPresent() ? before.getAsLong() : null);
  }

  /** The committed cursor of a device, {@link #START} when it never committed one. */
  public static long cursor(StoreView<Long> cursors, String user, String device) {
    return cursors.get(StoreKeys.cursor(user, device)).orElse(START);
  }

  private static <V> Page<V> page(List<KeyValue<Bytes, V>> read, int limit, Long start) {
    List<Page.Entry<V>> entries = new ArrayList<>(Math.min(read.size(), limit));
    for (int i = 0; i < read.size() && i < limit; i++) {
      KeyValue<Bytes, V> kv = read.get(i);
      entries.add(new Page.Entry<>(StoreKeys.entrySeq(kv.key), kv.value));
    }
    Long next = entries.isEmpty() ? start : Long.valueOf(entries.get(entries.size() - 1).seq());
    return new Page<>(entries, next, read.size() > limit);
  }
}
