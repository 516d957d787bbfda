package dev.impipe.ack.wheel;

import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The wheel's two stores: one record per device ({@code ack-devices}: its highest ACK and its pending runs) and a key
 * per (slot, device) that has runs in that slot ({@code ack-slots}), with the count of pending seqs and the lowest
 * slot that may hold a key. A device's slot keys are kept to exactly the slots of its runs: {@link #write} puts the
 * slots it gained and deletes those it left.
 */
final class Timers {

  private final KeyValueStore<Bytes, byte[]> deviceStore;
  private final KeyValueStore<Bytes, byte[]> slotStore;
  private final AtomicLong pending;
  private final long maxPending;
  /** Every slot below it is empty; lowered when a device enters an older slot. Not persisted: a restart scans
   * from the beginning once. */
  private long cursor = Long.MIN_VALUE;

  Timers(KeyValueStore<Bytes, byte[]> deviceStore, KeyValueStore<Bytes, byte[]> slotStore, AtomicLong pending,
      long maxPending) {
    this.deviceStore = deviceStore;
    this.slotStore = slotStore;
    this.pending = pending;
    this.maxPending = maxPending;
    // After a restore: RocksDB's estimate of the device records; exact deltas of pending seqs from here on.
    pending.set(deviceStore.approximateNumEntries());
  }

  long cursor() {
    return cursor;
  }

  void cursor(long slot) {
    cursor = slot;
  }

  /** The slot keys from the cursor up to {@code endSlot} (exclusive), oldest first. */
  KeyValueIterator<Bytes, byte[]> dueBefore(long endSlot) {
    return slotStore.range(Bytes.wrap(WheelCodec.slotStart(cursor)), Bytes.wrap(WheelCodec.slotStart(endSlot)));
  }

  /** The stored record of a device, raw (null: none). */
  byte[] raw(Bytes deviceKey) {
    return deviceStore.get(deviceKey);
  }

  /** Decodes a stored record (null: a fresh one); throws if it does not decode. */
  DeviceTimers decode(byte[] raw) {
    return raw == null ? DeviceTimers.empty() : WheelCodec.decodeDevice(raw, maxPending);
  }

  /**
   * Stores the device's record (deleted when it holds nothing), files it under the slots it entered, takes it out
   * of those it left ({@code slotsBefore}: its slots when read), and adds {@code pendingDelta} to the count.
   */
  void write(String user, String device, Bytes deviceKey, Set<Long> slotsBefore, DeviceTimers timers,
      long pendingDelta) {
    if (timers.isEmpty()) {
      remove(deviceStore, deviceKey);
    } else {
      deviceStore.put(deviceKey, WheelCodec.deviceValue(timers));
    }
    Set<Long> slotsAfter = timers.slots();
    for (long slot : slotsAfter) {
      if (!slotsBefore.contains(slot)) {
        slotStore.put(Bytes.wrap(WheelCodec.slot(slot, user, device)), WheelCodec.EMPTY);
        cursor = Math.min(cursor, slot);
      }
    }
    for (long slot : slotsBefore) {
      if (!slotsAfter.contains(slot)) {
        remove(slotStore, Bytes.wrap(WheelCodec.slot(slot, user, device)));
      }
    }
    pending.addAndGet(pendingDelta);
  }

  /** Removes a slot key (one that does not decode, or whose device record is gone). */
  void removeSlot(Bytes slotKey) {
    remove(slotStore, slotKey);
  }

  /** Removes a device record (quarantined, or swept after the ACKed retention). */
  void removeDevice(Bytes deviceKey) {
    remove(deviceStore, deviceKey);
  }

  /** The device records from {@code from} on (null: the first), in key order. */
  KeyValueIterator<Bytes, byte[]> devicesFrom(Bytes from) {
    return deviceStore.range(from, null);
  }

  /**
   * Deletes {@code key}. A put of null is a delete (a tombstone in the changelog) without {@code delete}'s read of the
   * old value: RocksDBStore#delete looks the key up first ({@code bench ackwheel --rate max} profile: delete 17.9% of
   * the stream thread, half of it that lookup).
   */
  static void remove(KeyValueStore<Bytes, byte[]> store, Bytes key) {
    store.put(key, null);
  }
}
