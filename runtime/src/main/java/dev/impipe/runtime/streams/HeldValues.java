package dev.impipe.runtime.streams;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.ToIntFunction;
import org.apache.kafka.common.utils.Bytes;

/**
 * The values a {@link WriteBackStore} holds in memory, by key: a hash map for lookups (the stream thread's, and
 * queries' point reads), and for range reads the same slots in key order, one ordered map per key group (the keys
 * sharing a prefix, e.g. a user's: a new key costs an insertion into its group's small map, not into one map of every
 * held key). Written by the stream thread only; read by query threads too.
 */
final class HeldValues {

  /** Byte order of keys ({@link OrderedKey#compare}, the order of {@link Bytes#compareTo}, vectorised). */
  static final Comparator<Bytes> ORDER = (a, b) -> OrderedKey.compare(a.get(), b.get());
  private static final Bytes ONE_GROUP = Bytes.wrap(new byte[0]);

  /**
   * How many buckets the keys fall into ({@link #groupBucket}): a write-back can write one bucket at a time. Part of the
   * stored checkpoints' meaning: never changed.
   */
  static final int BUCKETS = 32;

  /** Where a held key's value is: its bytes in the {@link ValueArena}, as numbers, changed under the lock. */
  static final class Slot {
    final Bytes group;
    final int bucket;
    private long at;
    /** {@link #DELETED}: held as deleted; {@link #LET_GO}: no longer held, its bytes in {@link #letGo}. */
    private int length = DELETED;
    /** The bytes of a slot let go, for a range read that still holds the slot. */
    private byte[] letGo;
    /** Changed since it was last written below. Stream thread only. */
    boolean dirty;

    Slot(Bytes group) {
      this.group = group;
      this.bucket = groupBucket(group);
    }
  }

  private static final int DELETED = -1;
  private static final int LET_GO = -2;

  private final ConcurrentHashMap<Bytes, Slot> slots = new ConcurrentHashMap<>();
  /** The held values' bytes. Under the lock: {@code this}. */
  private final ValueArena arena = new ValueArena();
  /** The same slots by bucket, for write-backs. Stream thread only. */
  private final List<Map<Bytes, Slot>> buckets = new ArrayList<>(BUCKETS);
  private final ConcurrentHashMap<Bytes, ConcurrentSkipListMap<Bytes, Slot>> groups = new ConcurrentHashMap<>();
  private final ToIntFunction<byte[]> groupLength;
  /** The keys written below at the last write-back ({@link #written}). Stream thread only. */
  private List<Bytes> written = new ArrayList<>();

  /**
   * @param groupLength the length of a key's group prefix ({@code <= 0}: the key is in the group of keys without one);
   *     a range read within one group reads that group's map only. Null: every key in one group.
   */
  HeldValues(ToIntFunction<byte[]> groupLength) {
    this.groupLength = groupLength;
    for (int b = 0; b < BUCKETS; b++) {
      buckets.add(new HashMap<>());
    }
  }

  /**
   * The bucket of a key whose group prefix (e.g. a user's first string field) is {@code group}: stable across
   * processes and versions (the bytes' {@link Arrays#hashCode(byte[])}), so that a stored checkpoint of a bucket
   * names the same keys after a restart. Keys without a group are in bucket 0.
   */
  static int groupBucket(Bytes group) {
    return group.get().length == 0 ? 0 : Math.floorMod(Arrays.hashCode(group.get()), BUCKETS);
  }

  Slot get(Bytes key) {
    return slots.get(key);
  }

  /** Holds {@code value} (null: deleted) under {@code key}, which is not held yet. Stream thread. */
  Slot add(Bytes key, byte[] value) {
    Slot slot = new Slot(group(key.get()));
    set(slot, value);
    slots.put(key, slot);
    buckets.get(slot.bucket).put(key, slot);
    groups.computeIfAbsent(slot.group, g -> new ConcurrentSkipListMap<>(ORDER)).put(key, slot);
    return slot;
  }

  /** Lets {@code key} go; its slot, or null when it was not held. Stream thread. */
  Slot remove(Bytes key) {
    Slot slot = slots.remove(key);
    if (slot != null) {
      buckets.get(slot.bucket).remove(key);
      unlist(key, slot);
      synchronized (this) {
        slot.letGo = slot.length >= 0 ? arena.copy(slot.at, slot.length) : null;
        free(slot);
        slot.length = LET_GO;
      }
    }
    return slot;
  }

  /** Sets a held slot's value (null: deleted). Stream thread. */
  synchronized void set(Slot slot, byte[] value) {
    free(slot);
    if (value == null) {
      slot.length = DELETED;
    } else {
      slot.at = arena.add(value);
      slot.length = value.length;
    }
    if (arena.fragmented()) {
      compact();
    }
  }

  /** A copy of a slot's bytes; null when it is held as deleted. Any thread. */
  synchronized byte[] bytes(Slot slot) {
    if (slot.length == LET_GO) {
      return slot.letGo;
    }
    return slot.length < 0 ? null : arena.copy(slot.at, slot.length);
  }

  /** Whether a slot is held as deleted. */
  synchronized boolean deleted(Slot slot) {
    return slot.length == DELETED;
  }

  private void free(Slot slot) {
    if (slot.length >= 0) {
      arena.free(slot.at, slot.length);
    }
  }

  /** Moves the values out of old chunks, so that those are dropped: the chunks hold at most about twice what is live. */
  private void compact() {
    for (Slot slot : slots.values()) {
      if (slot.length >= 0) {
        slot.at = arena.moveIfOld(slot.at, slot.length);
      }
    }
  }

  private void unlist(Bytes key, Slot slot) {
    ConcurrentSkipListMap<Bytes, Slot> group = groups.get(slot.group);
    if (group != null) {
      group.remove(key);
      if (group.isEmpty()) {
        groups.remove(slot.group, group); // only the stream thread adds: nothing is added to it meanwhile
      }
    }
  }

  /** {@code key} was written below: it is let go at the next {@link #letGoWritten} unless changed again. */
  void written(Bytes key) {
    written.add(key);
  }

  /**
   * Lets the keys written at the last write-back go (a commit has passed since: a range read that began before that
   * write has ended), except those changed since (dirty). Stream thread.
   */
  void letGoWritten() {
    if (written.isEmpty()) {
      return;
    }
    for (Bytes key : written) {
      Slot slot = slots.get(key);
      if (slot != null && !slot.dirty) {
        remove(key);
      }
    }
    written = new ArrayList<>();
  }

  int size() {
    return slots.size();
  }

  /** The held slots of bucket {@code b}, for a write-back (read-only: {@link #letGoWritten} lets keys go). */
  Set<Map.Entry<Bytes, Slot>> bucket(int b) {
    return Collections.unmodifiableMap(buckets.get(b)).entrySet();
  }

  void clear() {
    synchronized (this) {
      arena.clear();
    }
    written = new ArrayList<>();
    slots.clear();
    groups.clear();
    for (Map<Bytes, Slot> b : buckets) {
      b.clear();
    }
  }

  /**
   * The held slots from {@code from} (inclusive; null: from the first) to {@code to} (null: to the last), in key
   * order: a view of the map of the group the range lies in, or a copy of the held slots in the range when it spans
   * groups.
   */
  NavigableMap<Bytes, Slot> range(Bytes from, Bytes to, boolean toInclusive) {
    if (groupLength == null) {
      return view(groups.get(ONE_GROUP), from, to, toInclusive);
    }
    int length = from == null ? -1 : groupLength.applyAsInt(from.get());
    if (length > 0 && to != null) {
      byte[] end = OrderedKey.prefixEnd(Arrays.copyOf(from.get(), length));
      if (end != null && OrderedKey.compare(to.get(), end) <= 0) {
        return view(groups.get(Bytes.wrap(Arrays.copyOf(from.get(), length))), from, to, toInclusive);
      }
    }
    TreeMap<Bytes, Slot> copy = new TreeMap<>(ORDER);
    for (Map.Entry<Bytes, Slot> e : slots.entrySet()) {
      Bytes k = e.getKey();
      if ((from == null || ORDER.compare(k, from) >= 0)
          && (to == null || (toInclusive ? ORDER.compare(k, to) <= 0 : ORDER.compare(k, to) < 0))) {
        copy.put(k, e.getValue());
      }
    }
    return copy;
  }

  private static NavigableMap<Bytes, Slot> view(NavigableMap<Bytes, Slot> held, Bytes from, Bytes to,
      boolean toInclusive) {
    if (held == null) {
      return Collections.emptyNavigableMap();
    }
    NavigableMap<Bytes, Slot> v = held;
    if (from != null) {
      v = v.tailMap(from, true);
    }
    if (to != null) {
      v = v.headMap(to, toInclusive);
    }
    return v;
  }

  private Bytes group(byte[] key) {
    int length = groupLength == null ? -1 : groupLength.applyAsInt(key);
    return length <= 0 ? ONE_GROUP : Bytes.wrap(Arrays.copyOf(key, length));
  }
}
