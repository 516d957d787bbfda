package dev.impipe.runtime.streams;

import java.util.Arrays;

/**
 * Many small byte regions in one large array, located by offsets (ints) that their owner keeps: regions are taken at
 * the end, and a region given back leaves dead bytes there. The owner reclaims them by compacting ({@link #restart},
 * then {@link #move} of each live region) when it needs room and at least half the used bytes are dead, so each
 * compaction copies no more than was freed since the last one. Growing or compacting allocates a new array (rare; a
 * large one G1 allocates as a humongous object, among the old ones, and never copies); everything else writes bytes
 * and ints only. Not thread-safe.
 */
final class ByteArena {
  static final int MIN_CAPACITY = 4096;
  private static final int MAX_CAPACITY = Integer.MAX_VALUE - 16;

  private byte[] bytes = new byte[MIN_CAPACITY];
  /** Where the next region is taken. */
  private int end;
  /** The bytes in regions not given back. */
  private int live;
  private int compactions;

  /** The array the regions are in: replaced by {@link #grow} and {@link #restart}. */
  byte[] bytes() {
    return bytes;
  }

  /** Whether {@code size} more bytes fit without growing. */
  boolean fits(int size) {
    return bytes.length - end >= size;
  }

  /** Whether compacting would reclaim at least as much as it copies. */
  boolean worthCompacting() {
    return end - live >= live;
  }

  /** Takes a region of {@code size} bytes, growing the array when they do not fit; its offset. */
  int take(int size) {
    if (!fits(size)) {
      grow(size);
    }
    int at = end;
    end += size;
    live += size;
    return at;
  }

  /** Gives back a region of {@code size} bytes: dead until a compaction. */
  void free(int size) {
    live -= size;
  }

  /**
   * Starts a compaction with room for {@code extra} more bytes: a new array, empty; the owner then {@link #move}s each
   * live region into it. Returns the old array.
   */
  byte[] restart(int extra) {
    byte[] old = bytes;
    bytes = new byte[capacity((long) live + extra)];
    end = 0;
    compactions++;
    return old;
  }

  /**
   * During a compaction: copies a live region of {@code size} bytes (the first {@code used} of them meaningful) from
   * {@code old} at {@code from} to the end; its new offset.
   */
  int move(byte[] old, int from, int used, int size) {
    int at = end;
    System.arraycopy(old, from, bytes, at, used);
    end += size;
    return at;
  }

  int live() {
    return live;
  }

  /** Bytes taken so far, live or dead. */
  int used() {
    return end;
  }

  int capacity() {
    return bytes.length;
  }

  int compactions() {
    return compactions;
  }

  void clear() {
    bytes = new byte[MIN_CAPACITY];
    end = 0;
    live = 0;
  }

  private void grow(int size) {
    bytes = Arrays.copyOf(bytes, capacity(Math.max(bytes.length, (long) end + size)));
  }

  /** An array size for {@code needed} bytes: twice that (room to fill before the next growth), within the limits. */
  private static int capacity(long needed) {
    if (needed > MAX_CAPACITY) {
      throw new IllegalStateException("held values need " + needed + " bytes, more than an array holds");
    }
    return (int) Math.max(MIN_CAPACITY, Math.min(2 * needed, MAX_CAPACITY));
  }
}
