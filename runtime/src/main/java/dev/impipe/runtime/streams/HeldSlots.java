package dev.impipe.runtime.streams;

import java.util.Arrays;

/**
 * Keys and their values in primitive arrays only, by slot (an int): the bytes in a {@link ByteArena}, and per slot
 * in int arrays where they are, the value's length (-1: held as deleted) and room (a value changed again is written
 * over the old one when it fits, else taken anew with a quarter more room), the key's group and bucket, and flags for
 * the owner. Keys are found through an {@link OpenIndex}; the keys of a group (those sharing a prefix, e.g. a user's)
 * are a doubly linked list of slots, its head found through a second index, so that reading a group reads its keys
 * only. Holding, changing and letting go of keys store no object reference into this long-lived structure: no card
 * for a young collection to scan. Not thread-safe: {@link HeldValues} guards it.
 */
final class HeldSlots {
  private static final int MIN_SLOTS = 64;

  private final ByteArena arena = new ByteArena();
  private final OpenIndex keys = new OpenIndex() {
    @Override
    boolean matches(int slot, byte[] key, int from, int to) {
      int at = keyAt[slot];
      return Arrays.equals(arena.bytes(), at, at + keyLength[slot], key, from, to);
    }
  };
  /** Groups by their prefix, which is their first slot's key's. */
  private final OpenIndex groups = new OpenIndex() {
    @Override
    boolean matches(int group, byte[] key, int from, int to) {
      int at = keyAt[groupFirst[group]];
      return Arrays.equals(arena.bytes(), at, at + groupLength[group], key, from, to);
    }
  };

  // Per slot. A free slot has group -1, and next links the free slots.
  private int[] keyAt;
  private int[] keyLength;
  private int[] keyHash;
  private int[] valueAt;
  /** -1: held as deleted. */
  private int[] valueLength;
  private int[] valueRoom;
  private int[] group;
  private int[] next;
  private int[] previous;
  private byte[] bucket;
  private byte[] flags;
  /** Slots below this have been used. */
  private int slotEnd;
  private int freeSlot;
  private int size;

  // Per group. A free group has first -1, and length links the free groups.
  private int[] groupFirst;
  private int[] groupLength;
  private int[] groupHash;
  private int groupEnd;
  private int freeGroup;

  HeldSlots() {
    clear();
  }

  /** The slot holding {@code key}, or -1. */
  int find(byte[] key) {
    return keys.find(Arrays.hashCode(key), key, 0, key.length);
  }

  /**
   * Holds {@code key} (not held yet) in a new slot, held as deleted until {@link #set}; its group is the key's first
   * {@code groupLength} bytes (0: the group of keys without one), its bucket {@link HeldValues#groupBucket} that.
   */
  int insert(byte[] key, int groupLength) {
    int prefixHash = hash(1, key, 0, groupLength);
    int hash = hash(prefixHash, key, groupLength, key.length);
    int s = newSlot();
    int at = allocate(key.length); // before the slot is in use: a compaction here leaves it out
    System.arraycopy(key, 0, arena.bytes(), at, key.length);
    keyAt[s] = at;
    keyLength[s] = key.length;
    keyHash[s] = hash;
    valueAt[s] = 0;
    valueLength[s] = -1;
    valueRoom[s] = 0;
    bucket[s] = (byte) HeldValues.bucket(prefixHash, groupLength);
    flags[s] = 0;
    int g = groups.find(prefixHash, key, 0, groupLength);
    if (g < 0) {
      g = newGroup(s, groupLength, prefixHash);
      next[s] = -1;
    } else {
      next[s] = groupFirst[g];
      previous[groupFirst[g]] = s;
      groupFirst[g] = s;
    }
    previous[s] = -1;
    group[s] = g;
    keys.add(hash, s);
    size++;
    return s;
  }

  /** Sets a held slot's value; null: held as deleted. */
  void set(int slot, byte[] value) {
    if (value == null) {
      valueLength[slot] = -1;
      return;
    }
    if (value.length > valueRoom[slot]) {
      arena.free(valueRoom[slot]);
      valueRoom[slot] = 0; // out of a compaction that the allocation may make
      valueLength[slot] = -1;
      int room = value.length + (value.length >> 2) + 8;
      valueAt[slot] = allocate(room);
      valueRoom[slot] = room;
    }
    System.arraycopy(value, 0, arena.bytes(), valueAt[slot], value.length);
    valueLength[slot] = value.length;
  }

  /** Lets a held slot go; the slot may be reused by the next {@link #insert}. */
  void remove(int slot) {
    keys.remove(keyHash[slot], slot);
    int g = group[slot];
    if (previous[slot] >= 0) {
      next[previous[slot]] = next[slot];
    } else {
      groupFirst[g] = next[slot];
    }
    if (next[slot] >= 0) {
      previous[next[slot]] = previous[slot];
    }
    if (groupFirst[g] < 0) {
      groups.remove(groupHash[g], g);
      groupLength[g] = freeGroup;
      freeGroup = g;
    }
    arena.free(keyLength[slot] + valueRoom[slot]);
    group[slot] = -1;
    flags[slot] = 0;
    next[slot] = freeSlot;
    freeSlot = slot;
    size--;
  }

  /** A copy of a held slot's key. */
  byte[] key(int slot) {
    return Arrays.copyOfRange(arena.bytes(), keyAt[slot], keyAt[slot] + keyLength[slot]);
  }

  /** A copy of a held slot's value; null when held as deleted. */
  byte[] value(int slot) {
    int length = valueLength[slot];
    return length < 0 ? null : Arrays.copyOfRange(arena.bytes(), valueAt[slot], valueAt[slot] + length);
  }

  /** A held slot's key against {@code other}, in byte order ({@link OrderedKey#compare}). */
  int compareKey(int slot, byte[] other) {
    return Arrays.compareUnsigned(arena.bytes(), keyAt[slot], keyAt[slot] + keyLength[slot], other, 0, other.length);
  }

  /** The first slot of the group of the keys starting with {@code key[0, groupLength)}, or -1 when none is held. */
  int firstOfGroup(byte[] key, int groupLength) {
    int g = groups.find(hash(1, key, 0, groupLength), key, 0, groupLength);
    return g < 0 ? -1 : groupFirst[g];
  }

  /** The next slot of a held slot's group (in no particular order), or -1. */
  int nextOfGroup(int slot) {
    return next[slot];
  }

  /** Slots to scan for every held one: those below this that are {@link #held}. */
  int slotEnd() {
    return slotEnd;
  }

  boolean held(int slot) {
    return group[slot] >= 0;
  }

  int bucket(int slot) {
    return bucket[slot];
  }

  /** The owner's flags of a held slot: 0 when it was inserted. */
  int flags(int slot) {
    return flags[slot];
  }

  void setFlags(int slot, int value) {
    flags[slot] = (byte) value;
  }

  int size() {
    return size;
  }

  /** The arena, for tests. */
  ByteArena arena() {
    return arena;
  }

  /** The key index's capacity, for tests. */
  int indexCapacity() {
    return keys.capacity();
  }

  /** Holds nothing, in arrays of the first size. */
  void clear() {
    arena.clear();
    keys.clear();
    groups.clear();
    slotEnd = 0;
    growSlots(MIN_SLOTS);
    freeSlot = -1;
    size = 0;
    groupFirst = new int[MIN_SLOTS];
    groupLength = new int[MIN_SLOTS];
    groupHash = new int[MIN_SLOTS];
    groupEnd = 0;
    freeGroup = -1;
  }

  /**
   * {@link Arrays#hashCode(byte[])} continued from {@code hash} over {@code key[from, to)}: from 1 over a whole key,
   * its hash; over its group prefix, the group's.
   */
  private static int hash(int hash, byte[] key, int from, int to) {
    int h = hash;
    for (int i = from; i < to; i++) {
      h = 31 * h + key[i];
    }
    return h;
  }

  /** A slot not in use (group -1 until {@link #insert} links it). */
  private int newSlot() {
    if (freeSlot >= 0) {
      int s = freeSlot;
      freeSlot = next[s];
      return s;
    }
    if (slotEnd == keyAt.length) {
      growSlots(2 * slotEnd);
    }
    group[slotEnd] = -1;
    return slotEnd++;
  }

  private int newGroup(int first, int length, int hash) {
    int g;
    if (freeGroup >= 0) {
      g = freeGroup;
      freeGroup = groupLength[g];
    } else {
      if (groupEnd == groupFirst.length) {
        groupFirst = Arrays.copyOf(groupFirst, 2 * groupEnd);
        groupLength = Arrays.copyOf(groupLength, 2 * groupEnd);
        groupHash = Arrays.copyOf(groupHash, 2 * groupEnd);
      }
      g = groupEnd++;
    }
    groupFirst[g] = first;
    groupLength[g] = length;
    groupHash[g] = hash;
    groups.add(hash, g);
    return g;
  }

  private void growSlots(int capacity) {
    keyAt = grown(keyAt, capacity);
    keyLength = grown(keyLength, capacity);
    keyHash = grown(keyHash, capacity);
    valueAt = grown(valueAt, capacity);
    valueLength = grown(valueLength, capacity);
    valueRoom = grown(valueRoom, capacity);
    group = grown(group, capacity);
    next = grown(next, capacity);
    previous = grown(previous, capacity);
    bucket = slotEnd == 0 ? new byte[capacity] : Arrays.copyOf(bucket, capacity);
    flags = slotEnd == 0 ? new byte[capacity] : Arrays.copyOf(flags, capacity);
  }

  /** A copy of {@code a} with room for {@code capacity} slots; a new array when no slot was used (cleared). */
  private int[] grown(int[] a, int capacity) {
    return slotEnd == 0 ? new int[capacity] : Arrays.copyOf(a, capacity);
  }

  /**
   * Takes {@code size} bytes of the arena for a value. Out of room, it first compacts when at least half the used
   * bytes are dead (moving every held slot's key and value), else the arena grows.
   */
  private int allocate(int size) {
    if (!arena.fits(size) && arena.worthCompacting()) {
      byte[] old = arena.restart(size);
      for (int s = 0; s < slotEnd; s++) {
        if (group[s] >= 0) {
          keyAt[s] = arena.move(old, keyAt[s], keyLength[s], keyLength[s]);
          if (valueRoom[s] > 0) {
            valueAt[s] = arena.move(old, valueAt[s], Math.max(valueLength[s], 0), valueRoom[s]);
          }
        }
      }
    }
    return arena.take(size);
  }
}
