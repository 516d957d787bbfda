package dev.impipe.runtime.streams;

/**
 * A hash index of ids (small non-negative ints, e.g. slots of {@link HeldSlots}) in two int arrays: open addressing
 * with linear probing, at most half full, and backward-shift deletion (a removal moves the entries probed after it
 * back into the hole, so there are no tombstones and probes stay short however many keys come and go). It holds no
 * object references, so adding and removing stores none into a long-lived object (no card for the collector to scan).
 * What an id's key is, is the subclass's ({@link #matches}): the index keeps each id's hash only. Not thread-safe.
 */
abstract class OpenIndex {
  private static final int MIN_CAPACITY = 16;

  /** Per position: the id there plus one; 0 when empty. */
  private int[] ids;
  /** Per position: the hash of the id there. */
  private int[] hashes;
  private int size;

  OpenIndex() {
    clear();
  }

  /** Whether {@code id}'s key is {@code key[from, to)}. */
  abstract boolean matches(int id, byte[] key, int from, int to);

  /** The id whose key (of hash {@code hash}) is {@code key[from, to)}, or -1. */
  final int find(int hash, byte[] key, int from, int to) {
    int mask = ids.length - 1;
    for (int i = home(hash, mask);; i = (i + 1) & mask) {
      int id = ids[i] - 1;
      if (id < 0) {
        return -1;
      }
      if (hashes[i] == hash && matches(id, key, from, to)) {
        return id;
      }
    }
  }

  /** Adds {@code id}, whose key has hash {@code hash} and is not in the index yet. */
  final void add(int hash, int id) {
    if ((size + 1) * 2 > ids.length) {
      resize(ids.length * 2);
    }
    place(hash, id);
    size++;
  }

  /** Removes {@code id} (added with {@code hash}), moving back the entries whose probe ran past it. */
  final void remove(int hash, int id) {
    int mask = ids.length - 1;
    int hole = home(hash, mask);
    while (ids[hole] != id + 1) {
      if (ids[hole] == 0) {
        throw new IllegalStateException("id " + id + " is not in the index");
      }
      hole = (hole + 1) & mask;
    }
    for (int j = (hole + 1) & mask; ids[j] != 0; j = (j + 1) & mask) {
      // The entry at j may fill the hole when its home is not after the hole (cyclically, up to j).
      if (((j - home(hashes[j], mask)) & mask) >= ((j - hole) & mask)) {
        ids[hole] = ids[j];
        hashes[hole] = hashes[j];
        hole = j;
      }
    }
    ids[hole] = 0;
    hashes[hole] = 0;
    size--;
  }

  final int size() {
    return size;
  }

  /** How many positions the index has (a power of two, at least twice {@link #size()}). */
  final int capacity() {
    return ids.length;
  }

  final void clear() {
    ids = new int[MIN_CAPACITY];
    hashes = new int[MIN_CAPACITY];
    size = 0;
  }

  private void resize(int capacity) {
    int[] oldIds = ids;
    int[] oldHashes = hashes;
    ids = new int[capacity];
    hashes = new int[capacity];
    for (int i = 0; i < oldIds.length; i++) {
      if (oldIds[i] != 0) {
        place(oldHashes[i], oldIds[i] - 1);
      }
    }
  }

  private void place(int hash, int id) {
    int mask = ids.length - 1;
    int i = home(hash, mask);
    while (ids[i] != 0) {
      i = (i + 1) & mask;
    }
    ids[i] = id + 1;
    hashes[i] = hash;
  }

  /**
   * Where a hash's probe starts: the hash mixed (Murmur3's finaliser), as the keys' hashes (31-polynomials of bytes
   * that share prefixes) differ mostly in their low bits.
   */
  static int home(int hash, int mask) {
    int h = hash;
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return h & mask;
  }
}
