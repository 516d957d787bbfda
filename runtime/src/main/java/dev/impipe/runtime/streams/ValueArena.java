package dev.impipe.runtime.streams;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

/**
 * Byte values in large chunks, for {@link HeldValues}: a value changed many times between two write-backs would
 * otherwise be a new array at each change that lives for seconds, which every young collection copies, pointed at
 * from a long-lived slot, whose dirty card every young collection scans. A chunk (1 MiB: a humongous object, allocated
 * in the old generation and never copied) holds values appended one after the other; a slot keeps where its value
 * is, as numbers. A value is never written again where it is: a change appends the new value and frees the old, so a
 * chunk empties as its values change or are let go, and is dropped then. {@link #fragmented} says when the chunks
 * hold much more than is live, and the owner moves the live values out of old chunks ({@link #moveIfOld}).
 *
 * <p>Not thread-safe: its owner locks.
 */
final class ValueArena {

  /** Bytes per chunk; a longer value gets a chunk of its own. */
  static final int CHUNK = 1 << 20;

  private final List<byte[]> chunks = new ArrayList<>();
  /** Live bytes per chunk (same index): numbers, so that changing one stores no reference. */
  private int[] live = new int[16];
  private final Deque<Integer> freeIndexes = new ArrayDeque<>();
  private int current = -1;
  private int used;
  private long allocated;
  private long liveBytes;

  /** Appends {@code value}; returns where it is (a chunk index in the high half, the offset in the low half). */
  long add(byte[] value) {
    return append(value, 0, value.length);
  }

  /** A copy of the {@code length} bytes at {@code at}. */
  byte[] copy(long at, int length) {
    byte[] out = new byte[length];
    System.arraycopy(chunks.get(chunk(at)), offset(at), out, 0, length);
    return out;
  }

  /** The {@code length} bytes at {@code at} are no longer used; an emptied chunk (not the current one) is dropped. */
  void free(long at, int length) {
    int c = chunk(at);
    int left = live[c] - length;
    live[c] = left;
    liveBytes -= length;
    if (left == 0 && c != current) {
      allocated -= chunks.get(c).length;
      chunks.set(c, null);
      freeIndexes.push(c);
    }
  }

  /**
   * Where the value at {@code at} is after this: the same place when it is in the current chunk, else a copy appended
   * to the current chunk (the old place freed).
   */
  long moveIfOld(long at, int length) {
    if (chunk(at) == current) {
      return at;
    }
    long to = append(chunks.get(chunk(at)), offset(at), length);
    free(at, length);
    return to;
  }

  /** Appends {@code length} bytes of {@code source} from {@code from} to the current chunk; returns where. */
  private long append(byte[] source, int from, int length) {
    if (current < 0 || used + length > chunks.get(current).length) {
      newChunk(Math.max(CHUNK, length));
    }
    long at = ((long) current << 32) | used;
    System.arraycopy(source, from, chunks.get(current), used, length);
    used += length;
    live[current] += length;
    liveBytes += length;
    return at;
  }

  /** Whether the chunks hold more than twice what is live (and more than a few chunks): time to move. */
  boolean fragmented() {
    return allocated > 2 * liveBytes + 4L * CHUNK;
  }

  /** Bytes in chunks. */
  long allocated() {
    return allocated;
  }

  /** Bytes of the values in use. */
  long liveBytes() {
    return liveBytes;
  }

  /** Drops every chunk. */
  void clear() {
    chunks.clear();
    live = new int[16];
    freeIndexes.clear();
    current = -1;
    used = 0;
    allocated = 0;
    liveBytes = 0;
  }

  private void newChunk(int size) {
    int previous = current;
    byte[] chunk = new byte[size];
    if (freeIndexes.isEmpty()) {
      chunks.add(chunk);
      current = chunks.size() - 1;
      if (current == live.length) {
        live = Arrays.copyOf(live, live.length * 2);
      }
    } else {
      current = freeIndexes.pop();
      chunks.set(current, chunk);
    }
    live[current] = 0;
    used = 0;
    allocated += size;
    if (previous >= 0 && live[previous] == 0) {
      allocated -= chunks.get(previous).length; // emptied while it was the current one
      chunks.set(previous, null);
      freeIndexes.push(previous);
    }
  }

  private static int chunk(long at) {
    return (int) (at >>> 32);
  }

  private static int offset(long at) {
    return (int) at;
  }
}
