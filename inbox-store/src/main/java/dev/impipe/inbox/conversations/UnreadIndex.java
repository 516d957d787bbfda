package dev.impipe.inbox.conversations;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * The newest unread messages of one user's conversation, kept inside its {@link ConversationState} (no store of its
 * own, no write per message besides the state's): per message its conversation seq and a 64-bit hash of its
 * messageId, ascending by seq. A read marker removes a prefix; a recall finds its message by the hash (a RECALL
 * entry names the messageId only). Immutable.
 *
 * <p>Stored form: {@code varint n}, then per message the seq as an unsigned varint delta from the previous one (the
 * first from 0) and the hash as 8 bytes big-endian.
 */
public final class UnreadIndex {

  public static final UnreadIndex EMPTY = new UnreadIndex(new long[0], new long[0]);

  /** A varint of a long takes at most ten bytes (7 bits each). */
  private static final int MAX_VARINT_BYTES = 10;

  private final long[] seqs;
  private final long[] hashes;

  private UnreadIndex(long[] seqs, long[] hashes) {
    this.seqs = seqs;
    this.hashes = hashes;
  }

  /** Messages indexed. */
  public int size() {
    return seqs.length;
  }

  /** Whether the message at {@code seq} is indexed. */
  public boolean contains(long seq) {
    return Arrays.binarySearch(seqs, seq) >= 0;
  }

  /** The lowest indexed seq; only when not empty. */
  public long oldest() {
    return seqs[0];
  }

  /** With the message at {@code seq} added (in seq order); the same when it is there already. */
  public UnreadIndex with(long seq, String messageId) {
    int at = Arrays.binarySearch(seqs, seq);
    if (at >= 0) {
      return this;
    }
    int insert = -at - 1;
    long[] s = new long[seqs.length + 1];
    long[] h = new long[seqs.length + 1];
    System.arraycopy(seqs, 0, s, 0, insert);
    System.arraycopy(hashes, 0, h, 0, insert);
    s[insert] = seq;
    h[insert] = hash(messageId);
    System.arraycopy(seqs, insert, s, insert + 1, seqs.length - insert);
    System.arraycopy(hashes, insert, h, insert + 1, seqs.length - insert);
    return new UnreadIndex(s, h);
  }

  /** Without its oldest message. */
  public UnreadIndex withoutOldest() {
    return from(1);
  }

  /** How many indexed messages are at or below {@code seq}. */
  public int countUpTo(long seq) {
    int at = Arrays.binarySearch(seqs, seq);
    return at >= 0 ? at + 1 : -at - 1;
  }

  /** Without the messages at or below {@code seq}. */
  public UnreadIndex withoutUpTo(long seq) {
    return from(countUpTo(seq));
  }

  /** Without the message whose messageId is {@code messageId}; the same when it is not indexed. */
  public UnreadIndex without(String messageId) {
    long h = hash(messageId);
    for (int i = 0; i < hashes.length; i++) {
      if (hashes[i] == h) {
        long[] s = new long[seqs.length - 1];
        long[] hs = new long[seqs.length - 1];
        System.arraycopy(seqs, 0, s, 0, i);
        System.arraycopy(hashes, 0, hs, 0, i);
        System.arraycopy(seqs, i + 1, s, i, seqs.length - i - 1);
        System.arraycopy(hashes, i + 1, hs, i, seqs.length - i - 1);
        return new UnreadIndex(s, hs);
      }
    }
    return this;
  }

  private UnreadIndex from(int first) {
    if (first <= 0) {
      return this;
    }
    if (first >= seqs.length) {
      return EMPTY;
    }
    return new UnreadIndex(Arrays.copyOfRange(seqs, first, seqs.length),
        Arrays.copyOfRange(hashes, first, hashes.length));
  }

  /** The stored form (see the class comment). */
  public byte[] encode() {
    ByteArrayOutputStream out = new ByteArrayOutputStream(2 + seqs.length * 10);
    varint(out, seqs.length);
    long previous = 0;
    for (int i = 0; i < seqs.length; i++) {
      varint(out, seqs[i] - previous);
      previous = seqs[i];
      for (int b = 56; b >= 0; b -= 8) {
        out.write((int) (hashes[i] >>> b));
      }
    }
    return out.toByteArray();
  }

  /** Reads what {@link #encode()} wrote; {@link IllegalArgumentException} when it is not that. */
  public static UnreadIndex decode(byte[] bytes) {
    int[] pos = {0};
    long n = readVarint(bytes, pos);
    if (n < 0 || n > bytes.length) {
      throw new IllegalArgumentException("not an unread index");
    }
    if (n == 0) {
      requireEnd(bytes, pos);
      return EMPTY;
    }
    long[] s = new long[(int) n];
    long[] h = new long[(int) n];
    long previous = 0;
    for (int i = 0; i < n; i++) {
      long delta = readVarint(bytes, pos);
      if (delta < 0 || (i > 0 && delta == 0) || pos[0] + 8 > bytes.length) {
        throw new IllegalArgumentException("not an unread index");
      }
      previous += delta;
      s[i] = previous;
      long v = 0;
      for (int b = 0; b < 8; b++) {
        v = (v << 8) | (bytes[pos[0]++] & 0xff);
      }
      h[i] = v;
    }
    requireEnd(bytes, pos);
    return new UnreadIndex(s, h);
  }

  /** FNV-1a over the UTF-8 bytes of a messageId. */
  static long hash(String messageId) {
    long h = 0xcbf29ce484222325L;
    for (byte b : messageId.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
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
    return o instanceof UnreadIndex other && Arrays.equals(seqs, other.seqs) && Arrays.equals(hashes, other.hashes);
  }

  @Override
  public int hashCode() {
    return Objects.hash(Arrays.hashCode(seqs), Arrays.hashCode(hashes));
  }

  @Override
  public String toString() {
    return "UnreadIndex" + Arrays.toString(seqs);
  }
}
