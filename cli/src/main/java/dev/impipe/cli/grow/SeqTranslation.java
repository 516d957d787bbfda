package dev.impipe.cli.grow;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Inbox seqs held in a store's values, from one generation to the next, as {@link CursorTranslation} does for
 * cursors: an old seq's new value is the new offset of the newest copied entry of the user's inbox whose previous
 * seq is at or below it, so the entry an old seq names maps to its own copy, and a seq older than everything
 * retained to -1 (still below every entry). Fed every copied entry in new-offset order per user. Memory: one slot per
 * distinct (user, seq) asked for.
 */
public final class SeqTranslation {

  /** User -> old seq -> new seq (-1 until an entry at or below it is seen). */
  private final Map<String, TreeMap<Long, Long>> byUser = new HashMap<>();

  /** A seq of {@code user}'s inbox that a value holds. */
  public void wanted(String user, long oldSeq) {
    byUser.computeIfAbsent(user, u -> new TreeMap<>()).putIfAbsent(oldSeq, -1L);
  }

  public boolean isEmpty() {
    return byUser.isEmpty();
  }

  /** A copied entry of {@code user}'s inbox, previously at {@code prevSeq}, now at {@code newOffset}. */
  public void copiedEntry(String user, long prevSeq, long newOffset) {
    TreeMap<Long, Long> seqs = byUser.get(user);
    if (seqs == null) {
      return;
    }
    for (Map.Entry<Long, Long> e : seqs.tailMap(prevSeq, true).entrySet()) {
      if (newOffset > e.getValue()) {
        e.setValue(newOffset);
      }
    }
  }

  /** The new seq of {@code oldSeq} of {@code user}'s inbox; {@link IllegalArgumentException} if never asked for. */
  public long translate(String user, long oldSeq) {
    TreeMap<Long, Long> seqs = byUser.get(user);
    Long out = seqs == null ? null : seqs.get(oldSeq);
    if (out == null) {
      throw new IllegalArgumentException("seq " + oldSeq + " of " + user + " was not asked for");
    }
    return out;
  }
}
