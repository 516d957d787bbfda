package dev.impipe.inbox.query;

import java.util.List;

/**
 * One page of a timeline.
 *
 * @param entries the entries of the page, in the order asked for
 * @param next the seq to continue from: the last entry's seq, or the starting point when the page is empty
 *     ({@code null} only for an empty history page asked without {@code before})
 * @param hasMore whether more entries lie beyond this page right now
 */
public record Page<V>(List<Entry<V>> entries, Long next, boolean hasMore) {

  public Page {
    entries = List.copyOf(entries);
  }

  /** A timeline entry and its seq. */
  public record Entry<V>(long seq, V value) {}
}
