package dev.impipe.inbox.query;

import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.internal.StoreKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.ToLongFunction;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/** The timeline reads: a user's inbox after a seq (sync), a conversation before a seq (history, newest first). */
public final class Timelines {

  /** Seq meaning "before the first entry": {@code after=-1} reads from the start. */
  public static final long START = -1;

  private static final int SCAN_BATCH = 256;

  private Timelines() {}

  /** Entries of {@code owner} with seq greater than {@code after}, ascending, at most {@code limit}. */
  public static <V> Page<V> after(StoreView<V> store, String owner, long after, int limit) {
    return after(store, owner, after, limit, v -> 0, Long.MAX_VALUE);
  }

  /**
   * The same, at most {@code maxBytes} of entries by {@code size} (at least one): the store is read only as far as
   * the page needs.
   */
  public static <V> Page<V> after(StoreView<V> store, String owner, long after, int limit, ToLongFunction<V> size,
      long maxBytes) {
    if (after == Long.MAX_VALUE) {
      return new Page<>(List.of(), after, false);
    }
    Bytes from = StoreKeys.entry(owner, Math.max(0, after + 1));
    Bytes to = StoreKeys.entry(owner, Long.MAX_VALUE);
    List<KeyValue<Bytes, V>> read = store.range(from, to, false, limit + 1, size, maxBytes);
    return PageBytes.cut(page(read, limit, after), size, maxBytes);
  }

  /**
   * Entries of a group timeline ({@code owner} = {@code #groupId}) with seq greater than {@code after} whose
   * conversation seq lies in one of {@code ranges} ({@code [from, to)}, ascending), ascending, at most
   * {@code limit}. A group timeline's conversation seqs grow with its seqs (one fan-out task writes it in
   * conversation order), so the start of each range is found by binary search, not by scanning what lies before.
   */
  public static Page<InboxEntry> within(StoreView<InboxEntry> store, String owner, long after, List<long[]> ranges,
      int limit) {
    return within(store, owner, after, ranges, limit, Long.MAX_VALUE);
  }

  /** The same, at most {@code maxBytes} of entries ({@link JsonSize#entry}, at least one). */
  public static Page<InboxEntry> within(StoreView<InboxEntry> store, String owner, long after, List<long[]> ranges,
      int limit, long maxBytes) {
    List<Page.Entry<InboxEntry>> out = new ArrayList<>();
    long bytes = 0;
    long position = after;
    for (long[] range : ranges) {
      long start = seek(store, owner, Math.max(0, position + 1), range[0]);
      if (start < 0) {
        break; // nothing at or after range[0]: nothing for the later ranges either
      }
      boolean rangeDone = false;
      while (!rangeDone) {
        List<KeyValue<Bytes, InboxEntry>> batch = store.range(StoreKeys.entry(owner, start),
            StoreKeys.entry(owner, Long.MAX_VALUE), false, SCAN_BATCH);
        for (KeyValue<Bytes, InboxEntry> kv : batch) {
          if (kv.value.getConversationSeq() >= range[1]) {
            rangeDone = true;
            break;
          }
          long seq = StoreKeys.entrySeq(kv.key);
          long entryBytes = maxBytes == Long.MAX_VALUE ? 0 : JsonSize.entry(kv.value);
          if (out.size() == limit || !out.isEmpty() && bytes + entryBytes > maxBytes) {
            return new Page<>(out, out.get(out.size() - 1).seq(), true);
          }
          bytes += entryBytes;
          out.add(new Page.Entry<>(seq, kv.value));
          position = seq;
        }
        if (batch.size() < SCAN_BATCH) {
          rangeDone = true;
        } else if (!rangeDone) {
          start = position + 1;
        }
      }
    }
    Long next = out.isEmpty() ? after : Long.valueOf(out.get(out.size() - 1).seq());
    return new Page<>(out, next, false);
  }

  /**
   * The first seq at or after {@code from} of a group timeline whose conversation seq is at least
   * {@code conversationSeq}, -1 when there is none. Binary search over seqs, one single-entry range read per step.
   */
  static long seek(StoreView<InboxEntry> store, String owner, long from, long conversationSeq) {
    KeyValue<Bytes, InboxEntry> first = firstAtOrAfter(store, owner, from);
    if (first == null) {
      return -1;
    }
    if (first.value.getConversationSeq() >= conversationSeq) {
      return StoreKeys.entrySeq(first.key);
    }
    List<KeyValue<Bytes, InboxEntry>> last = store.range(StoreKeys.entry(owner, from),
        StoreKeys.entry(owner, Long.MAX_VALUE), true, 1);
    if (last.isEmpty() || last.get(0).value.getConversationSeq() < conversationSeq) {
      return -1;
    }
    // Invariant: no entry below lo qualifies (first does not either); answer qualifies; no entry in [bound, answer)
    // exists or qualifies.
    long lo = StoreKeys.entrySeq(first.key);
    long answer = StoreKeys.entrySeq(last.get(0).key);
    long bound = answer;
    while (lo < bound) {
      long mid = lo + (bound - lo) / 2;
      KeyValue<Bytes, InboxEntry> e = firstAtOrAfter(store, owner, mid);
      long seq = StoreKeys.entrySeq(e.key); // exists: answer >= bound > mid
      if (seq >= bound) {
        bound = mid;
      } else if (e.value.getConversationSeq() >= conversationSeq) {
        answer = seq;
        bound = seq;
      } else {
        lo = seq + 1;
      }
    }
    return answer;
  }

  private static <V> KeyValue<Bytes, V> firstAtOrAfter(StoreView<V> store, String owner, long seq) {
    List<KeyValue<Bytes, V>> read = store.range(StoreKeys.entry(owner, seq), StoreKeys.entry(owner, Long.MAX_VALUE),
        false, 1);
    return read.isEmpty() ? null : read.get(0);
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

  /**
   * History as a reader with access from conversation seq {@code fromSeq} sees it ({@link HistoryAccess#from}):
   * entries of {@code owner} with seq in {@code [fromSeq, before)}, newest first; nothing before the reader's join.
   * {@code hasMore} is false at the cut, so paging stops there.
   */
  public static <V> Page<V> before(StoreView<V> store, String owner, OptionalLong before, int limit, long fromSeq) {
    return before(store, owner, before, limit, fromSeq, v -> 0, Long.MAX_VALUE);
  }

  /** The same, at most {@code maxBytes} of entries by {@code size} (at least one). */
  public static <V> Page<V> before(StoreView<V> store, String owner, OptionalLong before, int limit, long fromSeq,
      ToLongFunction<V> size, long maxBytes) {
    long from = Math.max(0, fromSeq);
    if (before.isPresent() && before.getAsLong() <= from) {
      return new Page<>(List.of(), before.getAsLong(), false);
    }
    Bytes to = StoreKeys.entry(owner, before.isPresent() ? before.getAsLong() - 1 : Long.MAX_VALUE);
    List<KeyValue<Bytes, V>> read = store.range(StoreKeys.entry(owner, from), to, true, limit + 1, size, maxBytes);
    return PageBytes.cut(page(read, limit, before.isPresent() ? before.getAsLong() : null), size, maxBytes);
  }

  /**
   * The committed cursor of a device, {@link #START} when it never committed one; {@code device} as committed on
   * {@code im.device-cursors} ({@code <device>#<group>}: its position in that large group, see
   * {@link StoreKeys#committed}).
   */
  public static long cursor(StoreView<Long> cursors, String user, String device) {
    return cursors.get(StoreKeys.committed(user, device)).orElse(START);
  }

  /** A device's committed position in a large group's timeline, {@link #START} when it never committed one. */
  public static long groupPosition(StoreView<Long> cursors, String user, String device, String group) {
    return cursors.get(StoreKeys.groupPosition(user, device, group)).orElse(START);
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
