package dev.impipe.inbox.conversations;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * The newest unread messages of one user's conversation, kept inside its {@link ConversationState} (no store of its
 * own, no write per message besides the state's): per message its conversation seq and a 32-bit hash of its
 * messageId, ascending by seq. A read marker removes a prefix; a recall finds its message by the hash (a RECALL
 * entry names the messageId only). Immutable.
 *
 * <p>An index is a window {@code [from, to)} of arrays it may share with the indexes it was made from: a message
 * newer than every indexed one (the usual case: a conversation's messages arrive in seq order) is written at
 * {@code to} when no other index has written there yet, and dropping the oldest moves {@code from}, so that a
 * conversation at its cap costs no copy of its index per message; the arrays are copied (with room to grow) only when
 * they are full or shared past {@code to}. The slots inside a window are never written again, so an index handed to
 * another thread (a query) stays as it was. Written from one thread (the stream thread).
 *
 * <p>Stored form: {@code varint n}, then per message the seq as an unsigned varint delta from the previous one (the
 * first from 0) and the hash as 4 bytes big-endian. The form of state version 2 had 8 bytes of hash (FNV-1a 64): it
 * reads as the 32-bit hash of today ({@link #hash}, the two halves of that one xored).
 */
public final class UnreadIndex {

  public static final UnreadIndex EMPTY = new UnreadIndex(new Slots(0), 0, 0);

  /** A varint of a long takes at most ten bytes (7 bits each). */
  private static final int MAX_VARINT_BYTES = 10;

  /** The arrays an index's window is in; {@code used}: how far any index has written. */
  private static final class Slots {
    final long[] seqs;
    final int[] hashes;
    int used;

    Slots(int capacity) {
      seqs = new long[capacity];
      hashes = new int[capacity];
    }
  }

  private final Slots slots;
  private final int from;
  private final int to;

  private UnreadIndex(Slots slots, int from, int to) {
    this.slots = slots;
    this.from = from;
    this.to = to;
  }

  /** Messages indexed. */
  public int size() {
    return to - from;
  }

  /** Whether the message at {@code seq} is indexed. */
  public boolean contains(long seq) {
    return find(seq) >= 0;
  }

  /** The lowest indexed seq; only when not empty. */
  public long oldest() {
    return slots.seqs[from];
  }

  /** {@code seq}'s position in the window (from 0), or {@code -(insertion point) - 1}. */
  private int find(long seq) {
    if (to == from || seq > slots.seqs[to - 1]) {
      return -(to - from) - 1; // after the newest (the usual case): one slot read, no search
    }
    int at = Arrays.binarySearch(slots.seqs, from, to, seq);
    return at >= 0 ? at - from : at + from;
  }

  /** With the message at {@code seq} added (in seq order); the same when it is there already. */
  public UnreadIndex with(long seq, String messageId) {
    int at = find(seq);
    if (at >= 0) {
      return this;
    }
    int insert = -at - 1;
    int size = size();
    if (insert == size && slots.used == to && to < slots.seqs.length) {
      slots.seqs[to] = seq;
      slots.hashes[to] = hash(messageId);
      slots.used = to + 1;
      return new UnreadIndex(slots, from, to + 1);
    }
    // A copy with room for half as many more (at least 4) after the new one.
    Slots copy = copy(size + 1 + Math.max(4, (size + 1) / 2), insert, 0, 1);
    copy.seqs[insert] = seq;
    copy.hashes[insert] = hash(messageId);
    return new UnreadIndex(copy, 0, copy.used);
  }

  /**
   * The window in new arrays of {@code capacity}: its first {@code split} messages, then {@code gap} empty slots
   * (for an insertion), then the rest after skipping {@code skip} (a removal).
   */
  private Slots copy(int capacity, int split, int skip, int gap) {
    Slots copy = new Slots(capacity);
    int rest = size() - split - skip;
    System.arraycopy(slots.seqs, from, copy.seqs, 0, split);
    System.arraycopy(slots.hashes, from, copy.hashes, 0, split);
    System.arraycopy(slots.seqs, from + split + skip, copy.seqs, split + gap, rest);
    System.arraycopy(slots.hashes, from + split + skip, copy.hashes, split + gap, rest);
    copy.used = split + gap + rest;
    return copy;
  }

  /** Without its oldest message. */
  public UnreadIndex withoutOldest() {
    return from(1);
  }

  /** How many indexed messages are at or below {@code seq}. */
  public int countUpTo(long seq) {
    int at = find(seq);
    return at >= 0 ? at + 1 : -at - 1;
  }

  /** Without the messages at or below {@code seq}. */
  public UnreadIndex withoutUpTo(long seq) {
    return from(countUpTo(seq));
  }

  /** Without the message whose messageId is {@code messageId}; the same when it is not indexed. */
  public UnreadIndex without(String messageId) {
    int h = hash(messageId);
    for (int i = from; i < to; i++) {
      if (slots.hashes[i] == h) {
        if (size() == 1) {
          return EMPTY;
        }
        Slots copy = copy(size() - 1, i - from, 1, 0);
        return new UnreadIndex(copy, 0, copy.used);
      }
    }
    return this;
  }

  private UnreadIndex from(int first) {
    if (first <= 0) {
      return this;
    }
    if (first >= size()) {
      return EMPTY;
    }
    return new UnreadIndex(slots, from + first, to);
  }

  /** The stored form (see the class comment). */
  public byte[] encode() {
    ByteArrayOutputStream out = new ByteArrayOutputStream(2 + size() * 6);
    varint(out, size());
    long previous = 0;
    for (int i = from; i < to; i++) {
      long seq = slots.seqs[i];
      varint(out, seq - previous);
      previous = seq;
      int h = slots.hashes[i];
      for (int b = 24; b >= 0; b -= 8) {
        out.write(h >>> b);
      }
    }
    return out.toByteArray();
  }

  /** Reads what {@link #encode()} wrote; {@link IllegalArgumentException} when it is not that. */
  public static UnreadIndex decode(byte[] bytes) {
    return decode(bytes, Integer.BYTES);
  }

  /**
   * Reads a stored index whose hashes are {@code hashBytes} long: 4 ({@link #encode()}), or 8 (the form of state
   * version 2, each folded to today's 32 bits); {@link IllegalArgumentException} when it is not that.
   */
  static UnreadIndex decode(byte[] bytes, int hashBytes) {
    int[] pos = {0};
    long n = readVarint(bytes, pos);
    if (n < 0 || n > bytes.length) {
      throw new IllegalArgumentException("not an unread index");
    }
    if (n == 0) {
      requireEnd(bytes, pos);
      return EMPTY;
    }
    Slots read = new Slots((int) n);
    long[] s = read.seqs;
    int[] h = read.hashes;
    long previous = 0;
    for (int i = 0; i < n; i++) {
      long delta = readVarint(bytes, pos);
      if (delta < 0 || (i > 0 && delta == 0) || pos[0] + hashBytes > bytes.length) {
        throw new IllegalArgumentException("not an unread index");
      }
      previous += delta;
      s[i] = previous;
      long v = 0;
      for (int b = 0; b < hashBytes; b++) {
        v = (v << 8) | (bytes[pos[0]++] & 0xff);
      }
      h[i] = hashBytes == Long.BYTES ? fold(v) : (int) v;
    }
    requireEnd(bytes, pos);
    read.used = (int) n;
    return new UnreadIndex(read, 0, (int) n);
  }

  /** FNV-1a 64 over the UTF-8 bytes of a messageId, its two halves xored. */
  static int hash(String messageId) {
    return fold(fnv1a64(messageId));
  }

  static long fnv1a64(String messageId) {
    long h = 0xcbf29ce484222325L;
    for (byte b : messageId.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }

  private static int fold(long h) {
    return (int) (h ^ (h >>> 32));
  }

  private static void varint(ByteArrayOutputStream out, long value) {
    long v = value;
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static long readVarint(byte[] bytes, int[] pos) {
    long value = 0;
    for (int read = 0; read < MAX_VARINT_BYTES; read++) {
      if (pos[0] >= bytes.length) {
        throw new IllegalArgumentException("not an unread index");
      }
      byte b = bytes[pos[0]++];
      value |= (long) (b & 0x7F) << (7 * read);
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    throw new IllegalArgumentException("not an unread index");
  }

  private static void requireEnd(byte[] bytes, int[] pos) {
    if (pos[0] != bytes.length) {
      throw new IllegalArgumentException("not an unread index");
    }
  }

  @Override
  public boolean equals(Object o) {
    return o == this || o instanceof UnreadIndex other
        && Arrays.equals(slots.seqs, from, to, other.slots.seqs, other.from, other.to)
        && Arrays.equals(slots.hashes, from, to, other.slots.hashes, other.from, other.to);
  }

  @Override
  public int hashCode() {
    return Objects.hash(Arrays.hashCode(Arrays.copyOfRange(slots.seqs, from, to)),
        Arrays.hashCode(Arrays.copyOfRange(slots.hashes, from, to)));
  }

  @Override
  public String toString() {
    return "UnreadIndex" + Arrays.toString(Arrays.copyOfRange(slots.seqs, from, to));
  }
}
