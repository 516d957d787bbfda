package dev.impipe.runtime.streams;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.locks.StampedLock;
import java.util.function.ToIntFunction;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * The values a {@link WriteBackStore} holds in memory, by key, as bytes in primitive arrays ({@link HeldSlots}): a
 * change writes bytes and ints into long-lived arrays, never a reference, so young collections have no dirty card to
 * scan for it. Point reads find a key through a hash index; a range read within one key group (the keys sharing a
 * prefix, e.g. a user's) reads that group's keys only, any other range every held key. Each slot remembers whether it
 * changed since it was last written below (dirty) and whether the last write-back wrote it, for
 * {@link #letGoWritten}.
 *
 * <p>Written by the stream thread only; read by query threads too. A lock guards the arrays: the stream thread takes
 * it to write (uncontended, a compare-and-set), readers take it shared and get copies of the bytes, never the arrays
 * (which the stream thread overwrites in place, moves and replaces). The stream thread reads without it, as no one
 * else writes; the flags and the write-back bookkeeping are its own.
 */
final class HeldValues {

  /**
   * How many buckets the keys fall into ({@link #groupBucket}): a write-back can write one bucket at a time. Part of the
   * stored checkpoints' meaning: never changed.
   */
  static final int BUCKETS = 32;
  /** What {@link #get} returns for a key not held (a distinct instance: a held empty value is another array). */
  static final byte[] NOT_HELD = new byte[0];
  private static final byte[] NO_GROUP = new byte[0];
  private static final Comparator<KeyValue<Bytes, byte[]>> ORDER = (a, b) -> OrderedKey.compare(a.key.get(),
      b.key.get());
  /** Flag: changed since it was last written below. */
  private static final int DIRTY = 1;
  /** Flag: written below by the last write-back. */
  private static final int WRITTEN = 2;

  /** Where a write-back writes a changed key: its value, or null when it was deleted. */
  interface Below {
    void write(Bytes key, byte[] value);
  }

  private final StampedLock lock = new StampedLock();
  private final HeldSlots slots = new HeldSlots();
  private final ToIntFunction<byte[]> groupLength;
  /** Held slots that are dirty. Stream thread. */
  private int pending;
  /** The slots the last write-back wrote (flag {@link #WRITTEN}). Stream thread. */
  private int[] written = new int[64];
  private int writtenCount;

  /**
   * @param groupLength the length of a key's group prefix ({@code <= 0}: the key is in the group of keys without one);
   *     a range read within one group reads that group's keys only. Null: every key in one group.
   */
  HeldValues(ToIntFunction<byte[]> groupLength) {
    this.groupLength = groupLength;
  }

  /**
   * The bucket of a key whose group prefix (e.g. a user's first string field) is {@code group}: stable across
   * processes and versions (the bytes' {@link Arrays#hashCode(byte[])}), so that a stored checkpoint of a bucket
   * names the same keys after a restart. Keys without a group are in bucket 0.
   */
  static int groupBucket(Bytes group) {
    return bucket(Arrays.hashCode(group.get()), group.get().length);
  }

  /** The bucket of a group prefix of {@code length} bytes whose {@link Arrays#hashCode(byte[])} is {@code hash}. */
  static int bucket(int hash, int length) {
    return length <= 0 ? 0 : Math.floorMod(hash, BUCKETS);
  }

  /** A copy of the value held for {@code key}: null when it is held as deleted, {@link #NOT_HELD}. Any thread. */
  byte[] get(Bytes key) {
    long stamp = lock.readLock();
    try {
      int s = slots.find(key.get());
      return s < 0 ? NOT_HELD : slots.value(s);
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /** Holds {@code value} (null: deleted) for {@code key} until it is written below. Stream thread. */
  void write(Bytes key, byte[] value) {
    byte[] k = key.get();
    int s = slots.find(k);
    long stamp = lock.writeLock();
    try {
      if (s < 0) {
        s = slots.insert(k, groupLength == null ? 0 : Math.max(0, groupLength.applyAsInt(k)));
      }
      slots.set(s, value);
    } finally {
      lock.unlockWrite(stamp);
    }
    int f = slots.flags(s);
    if ((f & DIRTY) == 0) {
      slots.setFlags(s, f | DIRTY);
      pending++;
    }
  }

  /** Lets {@code key} go, changed or not. Stream thread. */
  void remove(Bytes key) {
    int s = slots.find(key.get());
    if (s >= 0) {
      letGo(s);
    }
  }

  private void letGo(int slot) {
    if ((slots.flags(slot) & DIRTY) != 0) {
      pending--;
    }
    long stamp = lock.writeLock();
    try {
      slots.remove(slot);
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /** How many held values changed since they were last written below. Stream thread. */
  int pending() {
    return pending;
  }

  /** How many values are held. Stream thread. */
  int size() {
    return slots.size();
  }

  /**
   * Writes the changed values of the keys in {@code buckets} (bit {@code b}: bucket {@code b}) to {@code below}, in
   * no particular order, and marks them written: they stay held until the next {@link #letGoWritten}. One pass over
   * the slots, without the lock (the values do not change meanwhile: the stream thread is writing them). Stream
   * thread.
   */
  void writeBack(long buckets, Below below) {
    if (pending == 0) {
      return;
    }
    for (int s = 0, end = slots.slotEnd(); s < end; s++) {
      if (slots.held(s) && (slots.flags(s) & DIRTY) != 0 && (buckets & (1L << slots.bucket(s))) != 0) {
        below.write(Bytes.wrap(slots.key(s)), slots.value(s));
        slots.setFlags(s, WRITTEN);
        pending--;
        if (writtenCount == written.length) {
          written = Arrays.copyOf(written, 2 * writtenCount);
        }
        written[writtenCount++] = s;
      }
    }
  }

  /**
   * Lets the keys written at the last write-back go (a commit has passed since: a range read that began before that
   * write has ended), except those changed since (dirty). A key let go meanwhile by {@link #remove} lost its flags
   * (its slot too, maybe to another key, whose flags start clear). Stream thread.
   */
  void letGoWritten() {
    for (int i = 0; i < writtenCount; i++) {
      int s = written[i];
      int f = slots.flags(s);
      if ((f & WRITTEN) != 0) {
        if ((f & DIRTY) == 0) {
          letGo(s);
        } else {
          slots.setFlags(s, DIRTY);
        }
      }
    }
    writtenCount = 0;
  }

  /** Lets every key go. Stream thread. */
  void clear() {
    long stamp = lock.writeLock();
    try {
      slots.clear();
    } finally {
      lock.unlockWrite(stamp);
    }
    pending = 0;
    written = new int[64];
    writtenCount = 0;
  }

  /**
   * Copies of the held keys from {@code from} (inclusive; null: from the first) to {@code to} (null: to the last) and
   * their values (null: held as deleted), in key order: read from the group the range lies in, or from every held key
   * when it spans groups. Any thread.
   */
  List<KeyValue<Bytes, byte[]>> range(Bytes from, Bytes to, boolean toInclusive) {
    byte[] f = from == null ? null : from.get();
    byte[] t = to == null ? null : to.get();
    int length = groupLength == null ? 0 : f == null ? -1 : groupLength.applyAsInt(f);
    boolean oneGroup = groupLength == null;
    if (length > 0 && t != null) {
      byte[] end = OrderedKey.prefixEnd(Arrays.copyOf(f, length));
      oneGroup = end != null && OrderedKey.compare(t, end) <= 0;
    }
    List<KeyValue<Bytes, byte[]>> out = new ArrayList<>();
    long stamp = lock.readLock();
    try {
      if (oneGroup) {
        for (int s = slots.firstOfGroup(f == null ? NO_GROUP : f, length); s >= 0; s = slots.nextOfGroup(s)) {
          addIfWithin(out, s, f, t, toInclusive);
        }
      } else {
        for (int s = 0, end = slots.slotEnd(); s < end; s++) {
          if (slots.held(s)) {
            addIfWithin(out, s, f, t, toInclusive);
          }
        }
      }
    } finally {
      lock.unlockRead(stamp);
    }
    out.sort(ORDER);
    return out;
  }

  private void addIfWithin(List<KeyValue<Bytes, byte[]>> out, int s, byte[] from, byte[] to, boolean toInclusive) {
    if ((from == null || slots.compareKey(s, from) >= 0)
        && (to == null || slots.compareKey(s, to) < (toInclusive ? 1 : 0))) {
      out.add(KeyValue.pair(Bytes.wrap(slots.key(s)), slots.value(s)));
    }
  }

  /** The slots, for tests. */
  HeldSlots slots() {
    return slots;
  }
}
