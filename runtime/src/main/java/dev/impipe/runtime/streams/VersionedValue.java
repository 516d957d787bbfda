package dev.impipe.runtime.streams;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The one encoding of persisted values (state stores and their changelogs) that are not Avro records: a version
 * byte, then fields in order. Numbers are big-endian, strings and byte arrays an int32 length (-1 = null) then the
 * bytes. A decoder names the versions it reads; any other version, or a value that ends early or runs on, throws
 * {@link UnknownVersionException} / {@link MalformedValueException}, so a store built with
 * {@link StoredValues#quarantining} (or a processor decoding by hand) can move the entry to the rejected topic.
 * (Avro values carry their own format byte and schema id.)
 */
public final class VersionedValue {

  private VersionedValue() {}

  /** A value of {@code format}'s {@code version}: write its fields, then {@link Writer#build()}. */
  public static Writer write(int version) {
    return new Writer(version);
  }

  /**
   * A reader of {@code value}, a value of {@code format} (its name, for the messages); its version must be one of
   * {@code versions}.
   */
  public static Reader read(byte[] value, String format, int... versions) {
    if (value == null || value.length == 0) {
      throw new MalformedValueException(format + " value is empty (no version byte)");
    }
    int version = Byte.toUnsignedInt(value[0]);
    for (int known : versions) {
      if (known == version) {
        return new Reader(value, format, version);
      }
    }
    throw new UnknownVersionException(format + " value has version " + version + "; this build reads versions "
        + Arrays.toString(versions));
  }

  /**
   * A serde of longs stored as {@code [version 1][int64]}, for stores whose value is one number (counts, seqs,
   * times).
   */
  public static Serde<Long> longSerde(String format) {
    Serializer<Long> serializer = (topic, value) -> value == null ? null : write(1).int64(value).build();
    Deserializer<Long> deserializer = (topic, bytes) -> {
      if (bytes == null) {
        return null;
      }
      Reader r = read(bytes, format, 1);
      long value = r.int64();
      r.end();
      return value;
    };
    return Serdes.serdeFrom(serializer, deserializer);
  }

  /** A version this build does not read. */
  public static final class UnknownVersionException extends SerializationException {
    public UnknownVersionException(String message) {
      super(message);
    }
  }

  /** A value whose bytes do not hold the fields of its version. */
  public static final class MalformedValueException extends SerializationException {
    public MalformedValueException(String message) {
      super(message);
    }
  }

  /** Appends fields after the version byte. */
  public static final class Writer {
    // A plain growing array, big-endian by hand: a state is encoded at every change of it (the write-back layer holds
    // values as their bytes), and a ByteArrayOutputStream locks per byte written and grows from 32 bytes.
    private byte[] buf = new byte[128];
    private int size;

    private Writer(int version) {
      if (version < 1 || version > 255) {
        throw new IllegalArgumentException("version must be 1..255, got " + version);
      }
      buf[size++] = (byte) version;
    }

    private void room(int n) {
      if (size + n > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + n));
      }
    }

    public Writer int8(int value) {
      room(1);
      buf[size++] = (byte) value;
      return this;
    }

    public Writer int32(int value) {
      room(Integer.BYTES);
      for (int shift = 24; shift >= 0; shift -= 8) {
        buf[size++] = (byte) (value >>> shift);
      }
      return this;
    }

    public Writer int64(long value) {
      room(Long.BYTES);
      for (int shift = 56; shift >= 0; shift -= 8) {
        buf[size++] = (byte) (value >>> shift);
      }
      return this;
    }

    /** A byte array, null allowed. */
    public Writer bytes(byte[] value) {
      if (value == null) {
        return int32(-1);
      }
      int32(value.length);
      room(value.length);
      System.arraycopy(value, 0, buf, size, value.length);
      size += value.length;
      return this;
    }

    /** A UTF-8 string, null allowed. */
    public Writer string(String value) {
      return bytes(value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    public byte[] build() {
      return Arrays.copyOf(buf, size);
    }
  }

  /** Reads the fields of a value in the order they were written. */
  public static final class Reader {
    private final ByteBuffer buf;
    private final String format;
    private final int version;

    private Reader(byte[] value, String format, int version) {
      this.buf = ByteBuffer.wrap(value, 1, value.length - 1);
      this.format = format;
      this.version = version;
    }

    /** The value's version (one of those asked for). */
    public int version() {
      return version;
    }

    public int int8() {
      return Byte.toUnsignedInt(get(() -> buf.get()));
    }

    public int int32() {
      return get(buf::getInt);
    }

    public long int64() {
      return get(buf::getLong);
    }

    public byte[] bytes() {
      int length = int32();
      if (length == -1) {
        return null;
      }
      if (length < 0 || length > buf.remaining()) {
        throw new MalformedValueException(format + " value: field length " + length + " with " + buf.remaining()
            + " bytes left");
      }
      byte[] out = new byte[length];
      buf.get(out);
      return out;
    }

    public String string() {
      byte[] utf8 = bytes();
      return utf8 == null ? null : new String(utf8, StandardCharsets.UTF_8);
    }

    /** Whether every field has been read. */
    public boolean atEnd() {
      return !buf.hasRemaining();
    }

    /** Checks that every byte has been read: a value that runs on is not of this version. */
    public void end() {
      if (buf.hasRemaining()) {
        throw new MalformedValueException(format + " value has " + buf.remaining() + " bytes after its fields");
      }
    }

    private <T> T get(java.util.function.Supplier<T> read) {
      try {
        return read.get();
      } catch (BufferUnderflowException e) {
        throw new MalformedValueException(format + " value ends before its fields do");
      }
    }
  }
}
