package dev.impipe.ack.wheel;

import dev.impipe.ack.wheel.WheelCodec.Pending;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The wheel's timers in its two stores: each pending seq's state ({@code ack-pending}, by device and seq) and its
 * entry by slot ({@code ack-wheel}), with the count of pending seqs and the lowest slot that may hold an entry.
 */
final class Timers {

  private final KeyValueStore<Bytes, byte[]> pendingStore;
  private final KeyValueStore<Bytes, byte[]> wheelStore;
  private final AtomicLong pending;
  /** Every slot below it is empty; lowered when a timer lands in an older slot. Not persisted: a restart scans
   * from the beginning once. */
  private long cursor = Long.MIN_VALUE;

  Timers(KeyValueStore<Bytes, byte[]> pendingStore, KeyValueStore<Bytes, byte[]> wheelStore, AtomicLong pending) {
    this.pendingStore = pendingStore;
    this.wheelStore = wheelStore;
    this.pending = pending;
    // RocksDB's estimate after a restore; exact deltas from here on.
    pending.set(pendingStore.approximateNumEntries());
  }

  long cursor() {
    return cursor;
  }

  void cursor(long slot) {
    cursor = slot;
  }

  /** The wheel entries of slots from the cursor up to {@code endSlot} (exclusive), oldest first. */
  KeyValueIterator<Bytes, byte[]> dueBefore(long endSlot) {
    return wheelStore.range(Bytes.wrap(WheelCodec.slotStart(cursor)), Bytes.wrap(WheelCodec.slotStart(endSlot)));
  }

  /**
   * A push of {@code seq}: armed with {@code fresh}, or for a redelivery with the new deadline but the history
   * (first push, attempts) kept.
   */
  void pushed(String user, String device, long seq, Pending fresh) {
    Pending p = fresh;
    byte[] old = pendingStore.get(Bytes.wrap(WheelCodec.pending(user, device, seq)));
    if (old != null) {
      Pending previous = WheelCodec.decodePendingValue(old);
      remove(wheelStore, Bytes.wrap(WheelCodec.wheel(previous.slot(), user, device, seq)));
      p = new Pending(fresh.slot(), Math.min(previous.firstPushedAt(), fresh.firstPushedAt()), fresh.deadline(),
          Math.max(previous.attempts(), fresh.attempts()));
    } else {
      pending.incrementAndGet();
    }
    arm(user, device, seq, p);
  }

  /** Disarms every pending seq of the device from {@code fromSeq} to {@code toSeq} (a cumulative ACK). */
  void acked(String user, String device, long fromSeq, long toSeq) {
    List<KeyValue<Bytes, byte[]>> done = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> it = pendingStore.range(Bytes.wrap(WheelCodec.pending(user, device, fromSeq)),
        Bytes.wrap(WheelCodec.pending(user, device, toSeq)))) {
      it.forEachRemaining(done::add);
    }
    for (KeyValue<Bytes, byte[]> entry : done) {
      Pending p = WheelCodec.decodePendingValue(entry.value);
      long ackedSeq = WheelCodec.decodePending(entry.key.get()).seq();
      remove(pendingStore, entry.key);
      remove(wheelStore, Bytes.wrap(WheelCodec.wheel(p.slot(), user, device, ackedSeq)));
      pending.decrementAndGet();
    }
  }

  /** Files {@code p} for the seq, in both stores, lowering the cursor if its slot is older. */
  void arm(String user, String device, long seq, Pending p) {
    pendingStore.put(Bytes.wrap(WheelCodec.pending(user, device, seq)), WheelCodec.pendingValue(p));
    wheelStore.put(Bytes.wrap(WheelCodec.wheel(p.slot(), user, device, seq)), WheelCodec.EMPTY);
    if (p.slot() < cursor) {
      cursor = p.slot();
    }
  }

  /** The stored pending state under {@code pendingKey}, or null. */
  byte[] pendingValue(Bytes pendingKey) {
    return pendingStore.get(pendingKey);
  }

  /** Removes a wheel entry. */
  void removeEntry(Bytes wheelKey) {
    remove(wheelStore, wheelKey);
  }

  /** Removes a pending seq (expired for good, or quarantined). */
  void removePending(Bytes pendingKey) {
    remove(pendingStore, pendingKey);
    pending.decrementAndGet();
  }

  /**
   * Deletes {@code key}. A put of null is a delete (a tombstone in the changelog) without {@code delete}'s read of the
   * old value: RocksDBStore#delete looks the key up first, so each ACKed seq paid two extra memtable searches
   * ({@code bench ackwheel --rate max} profile: delete 17.9% of the stream thread, half of it that lookup).
   */
  static void remove(KeyValueStore<Bytes, byte[]> store, Bytes key) {
    store.put(key, null);
  }
}
