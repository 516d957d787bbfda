package dev.impipe.notify.decide;

import dev.impipe.runtime.streams.PunctuationBudget;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The pending bursts of one task and their due index ({@link NotifyTopology#PENDING_STORE},
 * {@link NotifyTopology#DUE_STORE}; layouts in {@link NotifyKeys}): every write keeps the two in step, so a burst has
 * exactly one due entry, at {@link PendingBurst#due()}.
 */
final class BurstIndex {

  /** Where an entry that does not decode goes (the rejected topic), with its stored bytes. */
  interface Quarantine {
    void accept(String store, byte[] key, byte[] stored, String user, RuntimeException e);
  }

  /** Due entries read by one round, oldest first; {@code more}: the budget cut the round short. */
  record DueBatch(List<NotifyKeys.Due> due, boolean more) {}

  private final KeyValueStore<Bytes, byte[]> pending;
  private final KeyValueStore<Bytes, byte[]> dueIndex;
  private final AtomicLong count;
  private final long afterMs;
  private final long coalesceMs;
  private final Quarantine quarantine;
  /** No due entry is below it; lowered when one is added below. Not persisted: a restart scans from the start. */
  private long cursor = Long.MIN_VALUE;

  BurstIndex(KeyValueStore<Bytes, byte[]> pending, KeyValueStore<Bytes, byte[]> dueIndex, AtomicLong count,
      long afterMs, long coalesceMs, Quarantine quarantine) {
    this.pending = pending;
    this.dueIndex = dueIndex;
    this.count = count;
    this.afterMs = afterMs;
    this.coalesceMs = coalesceMs;
    this.quarantine = quarantine;
  }

  /** The burst of {@code t}, or null; one that does not decode is quarantined and removed (its due entry then finds
   * nothing when it comes round). */
  PendingBurst load(NotifyKeys.Burst t) {
    Bytes key = NotifyKeys.pending(t.userId(), t.deviceId(), t.conversationId());
    byte[] raw = pending.get(key);
    if (raw == null) {
      return null;
    }
    try {
      return PendingBurst.decode(raw);
    } catch (RuntimeException e) {
      quarantine.accept(NotifyTopology.PENDING_STORE, key.get(), raw, t.userId(), e);
      remove(pending, key);
      count.decrementAndGet();
      return null;
    }
  }

  /**
   * Stores {@code after} (null: remove) in place of {@code before} (null: none) and moves the due entry to the time
   * {@code after} asks for at {@code now} ({@link PendingBurst#nextDue}); a burst with nothing to wait for goes.
   */
  void write(NotifyKeys.Burst t, PendingBurst before, PendingBurst after, long now) {
    if (before != null && after == before) {
      return;
    }
    long oldDue = before == null ? PendingBurst.NONE : before.due();
    long newDue = after == null ? PendingBurst.NONE : after.nextDue(afterMs, coalesceMs, now);
    if (oldDue != PendingBurst.NONE && oldDue != newDue) {
      remove(dueIndex, NotifyKeys.due(oldDue, t.userId(), t.deviceId(), t.conversationId()));
    }
    Bytes key = NotifyKeys.pending(t.userId(), t.deviceId(), t.conversationId());
    if (newDue == PendingBurst.NONE) {
      if (before != null) {
        remove(pending, key);
        count.decrementAndGet();
      }
      return;
    }
    pending.put(key, after.withDue(newDue).encode());
    if (newDue != oldDue) {
      dueIndex.put(NotifyKeys.due(newDue, t.userId(), t.deviceId(), t.conversationId()), NotifyKeys.EMPTY);
      cursor = Math.min(cursor, newDue);
    }
    if (before == null) {
      count.incrementAndGet();
    }
  }

  /** The conversations {@code device} has a burst in. */
  List<NotifyKeys.Burst> of(String user, String device) {
    List<NotifyKeys.Burst> out = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> it = pending.range(NotifyKeys.pendingFrom(user, device),
        NotifyKeys.pendingTo(user, device))) {
      while (it.hasNext()) {
        out.add(NotifyKeys.decodePending(it.next().key));
      }
    }
    return out;
  }

  /**
   * The due entries at or before {@code upTo}, oldest first, one unit of {@code lease} each, taken out of the index
   * (their bursts are still there: the caller decides them and writes what follows). Keys that do not decode are
   * quarantined.
   */
  DueBatch takeDue(long upTo, PunctuationBudget.Lease lease) {
    if (upTo == Long.MIN_VALUE || cursor > upTo) {
      return new DueBatch(List.of(), false);
    }
    List<Bytes> keys = new ArrayList<>();
    boolean more = false;
    try (KeyValueIterator<Bytes, byte[]> it = dueIndex.range(NotifyKeys.dueStart(cursor),
        NotifyKeys.dueStart(upTo + 1))) {
      while (it.hasNext()) {
        if (!lease.take(1)) {
          more = true;
          break;
        }
        keys.add(it.next().key);
      }
    }
    List<NotifyKeys.Due> due = new ArrayList<>(keys.size());
    for (Bytes key : keys) {
      try {
        due.add(NotifyKeys.decodeDue(key));
      } catch (RuntimeException e) {
        quarantine.accept(NotifyTopology.DUE_STORE, key.get(), key.get(), null, e);
      }
      remove(dueIndex, key);
    }
    // Times before the last one seen are empty now; the last one may hold more (where the budget cut the round).
    cursor = more && !due.isEmpty() ? due.get(due.size() - 1).due() : upTo + 1;
    return new DueBatch(due, more);
  }

  /**
   * Deletes {@code key}: a put of null is a delete (a changelog tombstone) without {@code delete}'s read of the old
   * value.
   */
  private static void remove(KeyValueStore<Bytes, byte[]> store, Bytes key) {
    store.put(key, null);
  }
}
