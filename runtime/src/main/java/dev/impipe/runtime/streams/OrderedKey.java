package dev.impipe.runtime.streams;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.kafka.common.utils.Bytes;

/**
 * The one ordered-bytes codec of every state-store key: a key is a sequence of fields whose encodings compare,
 * byte by byte and unsigned (RocksDB's order, {@link Bytes#compareTo}, {@link Arrays#compareUnsigned}), exactly as
 * the fields compare one after the other. So a key range is a range of the first fields' values, and a key prefix
 * (its first fields) names exactly the keys that start with those values.
 *
 * <ul>
 *   <li>string: UTF-8, each 0x00 byte written as 0x00 0xFF, then the terminator 0x00 0x01. Orders like the UTF-8
 *       bytes (code point order); no string's encoding is a prefix of another's, so {@code "bob"} never reaches into
 *       {@code "bobby"} nor {@code "bob\0x"}.
 *   <li>int64 / int32: big-endian with the sign bit flipped, so negative numbers sort before positive ones.
 *   <li>rest: raw bytes to the end of the key (the last field only; orders as the bytes do).
 * </ul>
 *
 * <p>Every store's own layout (which fields, in which order) is documented next to the store's name and built by its
 * module's key class with this codec; nothing else in the code base writes ordered key bytes.
 */
public final class OrderedKey {

  private static final byte ZERO = 0x00;
  private static final byte ESCAPED_ZERO = (byte) 0xFF;
  private static final byte TERMINATOR = 0x01;

  private OrderedKey() {}

  /** A builder of a new key. */
  public static Builder key() {
    return new Builder();
  }

  /** A reader of {@code key}'s fields, from the first. */
  public static Reader read(byte[] key) {
    return new Reader(key);
  }

  /** A reader of {@code key}'s fields, from the first. */
  public static Reader read(Bytes key) {
    return new Reader(key.get());
  }

  /**
   * The smallest byte string above every key that starts with {@code prefix}: the exclusive end of the prefix's
   * range. It is also an exact inclusive end (for stores whose ranges include their end, like Kafka Streams') as long
   * as every key of the store is longer than {@code prefix}, which holds when the prefix is some of a key's fields and
   * not a whole key: the end is never longer than the prefix. {@code null} when no byte string is above every such key
   * (a prefix of 0xFF bytes only): read the range without an end.
   */
  public static byte[] prefixEnd(byte[] prefix) {
    for (int i = prefix.length - 1; i >= 0; i--) {
      if (prefix[i] != (byte) 0xFF) {
        byte[] end = Arrays.copyOf(prefix, i + 1);
        end[i]++;
        return end;
      }
    }
    return null;
  }

  /** The smallest byte string above {@code key} (the key and a 0x00 byte): where a scan resumes after it. */
  public static byte[] after(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }

  /** {@link #prefixEnd(byte[])} as {@link Bytes}. */
  public static Bytes prefixEnd(Bytes prefix) {
    byte[] end = prefixEnd(prefix.get());
    return end == null ? null : Bytes.wrap(end);
  }

  /**
   * The length of {@code key}'s first field when it is a string (its bytes up to and including the terminator): the
   * prefix shared by every key with the same first value. -1 when the key holds no terminated string there.
   */
  public static int firstStringLength(byte[] key) {
    for (int i = 0; i + 1 < key.length; i++) {
      if (key[i] == ZERO) {
        if (key[i + 1] == TERMINATOR) {
          return i + 2;
        }
        i++; // an escaped zero
      }
    }
    return -1;
  }

  /** Byte order of two keys: unsigned lexicographic, shorter first on a common prefix (RocksDB's). */
  public static int compare(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
  }

  /** Appends fields; {@link #build()} returns the key. */
  public static final class Builder {
    private byte[] buf = new byte[32];
    private int size;

    private Builder() {}

    /** A string field; null is rejected (a key field always has a value). */
    public Builder string(String value) {
      if (value == null) {
        throw new IllegalArgumentException("a key string must not be null");
      }
      byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
      int zeros = 0;
      for (byte b : utf8) {
        zeros += b == ZERO ? 1 : 0;
      }
      ensure(utf8.length + zeros + 2);
      for (byte b : utf8) {
        if (b == ZERO) {
          buf[size++] = ZERO;
          buf[size++] = ESCAPED_ZERO;
        } else {
          buf[size++] = b;
        }
      }
      buf[size++] = ZERO;
      buf[size++] = TERMINATOR;
      return this;
    }

    /** A signed 64-bit field, in order (big-endian, sign bit flipped). */
    public Builder int64(long value) {
      ensure(Long.BYTES);
      long ordered = value ^ Long.MIN_VALUE;
      for (int shift = 56; shift >= 0; shift -= 8) {
        buf[size++] = (byte) (ordered >>> shift);
      }
      return this;
    }

    /** A signed 32-bit field, in order (big-endian, sign bit flipped). */
    public Builder int32(int value) {
      ensure(Integer.BYTES);
      int ordered = value ^ Integer.MIN_VALUE;
      for (int shift = 24; shift >= 0; shift -= 8) {
        buf[size++] = (byte) (ordered >>> shift);
      }
      return this;
    }

    /** Raw bytes to the end of the key: the last field only (a reader can only take them with {@link Reader#rest}). */
    public Builder rest(byte[] bytes) {
      ensure(bytes.length);
      System.arraycopy(bytes, 0, buf, size, bytes.length);
      size += bytes.length;
      return this;
    }

    public byte[] build() {
      return Arrays.copyOf(buf, size);
    }

    public Bytes bytes() {
      return Bytes.wrap(build());
    }

    private void ensure(int more) {
      if (buf.length - size < more) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
      }
    }
  }

  /**
   * Reads a key's fields in the order they were written; a key that does not hold the field asked for throws
   * {@link IllegalArgumentException}.
   */
  public static final class Reader {
    private final byte[] key;
    private int pos;

    private Reader(byte[] key) {
      this.key = key;
    }

    public String string() {
      int start = pos;
      boolean escaped = false;
      while (true) {
        if (pos + 1 >= key.length) {
          throw malformed("unterminated string");
        }
        if (key[pos] != ZERO) {
          pos++;
        } else if (key[pos + 1] == TERMINATOR) {
          break;
        } else if (key[pos + 1] == ESCAPED_ZERO) {
          escaped = true;
          pos += 2;
        } else {
          throw malformed("bad escape in string");
        }
      }
      int end = pos;
      pos += 2;
      if (!escaped) {
        return new String(key, start, end - start, StandardCharsets.UTF_8);
      }
      byte[] utf8 = new byte[end - start];
      int n = 0;
      for (int i = start; i < end; i++) {
        utf8[n++] = key[i];
        if (key[i] == ZERO) {
          i++;
        }
      }
      return new String(utf8, 0, n, StandardCharsets.UTF_8);
    }

    public long int64() {
      require(Long.BYTES, "int64");
      long v = 0;
      for (int i = 0; i < Long.BYTES; i++) {
        v = (v << 8) | (key[pos++] & 0xFF);
      }
      return v ^ Long.MIN_VALUE;
    }

    public int int32() {
      require(Integer.BYTES, "int32");
      int v = 0;
      for (int i = 0; i < Integer.BYTES; i++) {
        v = (v << 8) | (key[pos++] & 0xFF);
      }
      return v ^ Integer.MIN_VALUE;
    }

    /** The bytes from here to the end of the key. */
    public byte[] rest() {
      byte[] rest = Arrays.copyOfRange(key, pos, key.length);
      pos = key.length;
      return rest;
    }

    /** Whether every byte has been read. */
    public boolean atEnd() {
      return pos == key.length;
    }

    private void require(int bytes, String field) {
      if (key.length - pos < bytes) {
        throw malformed("too short for an " + field);
      }
    }

    private IllegalArgumentException malformed(String why) {
      return new IllegalArgumentException("malformed key of " + key.length + " bytes at byte " + pos + ": " + why);
    }
  }
}
