package dev.impipe.inbox.query;

import java.util.List;
import java.util.function.ToLongFunction;

/**
 * Cuts a page to a byte budget: the longest prefix of its entries whose sizes sum to at most {@code maxBytes},
 * never fewer than one entry (a single entry larger than the budget still goes out alone, so paging always moves
 * on). A cut page says {@code hasMore} and continues ({@code next}) after its last entry.
 */
public final class PageBytes {

  private PageBytes() {}

  public static <V> Page<V> cut(Page<V> page, ToLongFunction<V> size, long maxBytes) {
    List<Page.Entry<V>> entries = page.entries();
    int keep = fitting(entries, size, maxBytes);
    if (keep == entries.size()) {
      return page;
    }
    List<Page.Entry<V>> kept = entries.subList(0, keep);
    return new Page<>(kept, kept.get(keep - 1).seq(), true);
  }

  /** How many of the first entries fit into {@code maxBytes} (at least one when there is one). */
  static <V> int fitting(List<Page.Entry<V>> entries, ToLongFunction<V> size, long maxBytes) {
    long bytes = 0;
    for (int i = 0; i < entries.size(); i++) {
      bytes += size.applyAsLong(entries.get(i).value());
      if (bytes > maxBytes && i > 0) {
        return i;
      }
    }
    return entries.size();
  }
}
