package dev.impipe.inbox.query;

import dev.impipe.inbox.internal.HistoryMaterialiser;

/**
 * Read-your-writes for history: the history store of a partition has applied every conversation seq up to the one it
 * records (the fan-out writes a record or a tombstone for each seq it processed, in order).
 */
public final class HistoryApplied {

  private HistoryApplied() {}

  /** The highest conversation seq applied, -1 when none. */
  public static long seq(StoreView<Long> applied) {
    return applied.get(HistoryMaterialiser.APPLIED_KEY).orElse(-1L);
  }

  /**
   * Throws {@link NotServableException.Reason#BEHIND} until the store has applied conversation seq {@code minSeq};
   * call it before reading the history, never after.
   */
  public static void require(StoreView<Long> applied, long minSeq, int partition) {
    long seen = seq(applied);
    if (seen < minSeq) {
      throw new NotServableException(NotServableException.Reason.BEHIND, "history of partition " + partition
          + " has applied conversation seq " + seen + ", not yet " + minSeq);
    }
  }
}
