package dev.impipe.delay.internal;

import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.streams.VersionedValue;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every byte layout of the delay stores, in one place. Keys are {@link OrderedKey}s (numbers big-endian with the sign
 * bit flipped), so RocksDB's byte order is due order.
 *
 * <ul>
 *   <li>schedule key: {@code int64 due epoch millis, rest schedule id (UTF-8)} — the due time first, so a range scan
 *       from the oldest due time to "now" reads only what is due, in due order, and stops exactly at "now" (never
 *       early).
 *   <li>index key: {@code rest schedule id (UTF-8)}; index value: {@code [version 1] int64 due epoch millis of the
 *       schedule key} ({@link VersionedValue}).
 *   <li>schedule value: {@code [version 1: 1][deliverAt millis: 8][target topic: 2 + UTF-8][key: 4 + bytes, -1 =
 *       null][value: 4 + bytes, -1 = null][header count: 4]{[name: 2 + UTF-8][value: 4 + bytes, -1 = null]}}.
 *   <li>position (the sweep's progress, one per task, kept in both segmented stores): key {@link #POSITION_KEY}
 *       (0xFF bytes: after every schedule key, whose first byte is 0xFF only for a due time millions of years
 *       ahead); value {@code [version 1: 1][fileFromMs: 8][pending: 8][resumeFrom: rest]}. The schedule value and
 *       the position keep their own encodings (they had a version byte first before {@link VersionedValue}).
 * </ul>
 * Due times before the epoch are filed at the epoch (they are past due anyway).
 */
public final class ScheduleCodec {

  /** Bytes of the due part of a schedule key. */
  public static final int DUE_BYTES = Long.BYTES;

  private static final byte VERSION = 1;

  /**
   * The key of the sweep position record (see {@link Position}): due at the end of time, with an id of two 0xFF bytes,
   * which no UTF-8 id starts with; ten 0xFF bytes, after every schedule key.
   */
  public static final byte[] POSITION_KEY = OrderedKey.key().int64(Long.MAX_VALUE).rest(new byte[] {-1, -1}).build();

  /**
   * The sweep's progress: every schedule key below {@code resumeFrom} has been delivered, none at or above it;
   * new schedules are filed at {@code fileFromMs} or later (so never below {@code resumeFrom}); {@code pending} is
   * the task's count of undelivered schedules when it was written (an estimate after a crash).
   */
  public record Position(byte[] resumeFrom, long fileFromMs, long pending) {}

  public static byte[] encodePosition(Position position) {
    return ByteBuffer.allocate(1 + 8 + 8 + position.resumeFrom().length).put(VERSION).putLong(position.fileFromMs())
        .putLong(position.pending()).put(position.resumeFrom()).array();
  }

  public static Position decodePosition(byte[] bytes) {
    ByteBuffer buf = ByteBuffer.wrap(bytes);
    byte version = buf.get();
    if (version != VERSION) {
      throw new VersionedValue.UnknownVersionException("delay sweep position value has version " + version
          + "; this build reads versions [" + VERSION + "]");
    }
    long fileFrom = buf.getLong();
    long pending = buf.getLong();
    byte[] resume = new byte[buf.remaining()];
    buf.get(resume);
    return new Position(resume, fileFrom, pending);
  }

  private ScheduleCodec() {}

  /** The schedule-store key of {@code id} due at {@code dueMs}. */
  public static byte[] scheduleKey(long dueMs, byte[] id) {
    if (id.length == 0) {
      throw new IllegalArgumentException("schedule id must not be empty");
    }
    return OrderedKey.key().int64(Math.max(0, dueMs)).rest(id).build();
  }

  /**
   * The smallest possible key due at {@code dueMs}: every real key due at or after {@code dueMs} sorts after it,
   * every key due before it sorts before it (ids are never empty, so no real key equals it).
   */
  public static byte[] duePrefix(long dueMs) {
    return OrderedKey.key().int64(Math.max(0, dueMs)).build();
  }

  /** The due time (epoch millis) a schedule key is filed under. */
  public static long dueOf(byte[] scheduleKey) {
    return OrderedKey.read(scheduleKey).int64();
  }

  /** The schedule id of a schedule key, which is also its index key. */
  public static byte[] idOf(byte[] scheduleKey) {
    OrderedKey.Reader r = OrderedKey.read(scheduleKey);
    r.int64();
    return r.rest();
  }

  public static byte[] indexValue(long dueMs) {
    return VersionedValue.write(VERSION).int64(Math.max(0, dueMs)).build();
  }

  public static long indexDue(byte[] indexValue) {
    VersionedValue.Reader r = VersionedValue.read(indexValue, "delay index", VERSION);
    long due = r.int64();
    r.end();
    return due;
  }

  /** The schedule-store value of an entry. */
  public static byte[] encodeEntry(ScheduledEntry entry) {
    byte[] topic = entry.topic().getBytes(StandardCharsets.UTF_8);
    int size = 1 + 8 + 2 + topic.length + sizeOf(entry.key()) + sizeOf(entry.value()) + 4;
    Map<byte[], byte[]> headers = new LinkedHashMap<>();
    for (Map.Entry<String, byte[]> h : entry.headers().entrySet()) {
      byte[] name = h.getKey().getBytes(StandardCharsets.UTF_8);
      headers.put(name, h.getValue());
      size += 2 + name.length + sizeOf(h.getValue());
    }
    ByteBuffer buf = ByteBuffer.allocate(size).put(VERSION).putLong(entry.deliverAtMs());
    putShortString(buf, topic);
    putBytes(buf, entry.key());
    putBytes(buf, entry.value());
    buf.putInt(headers.size());
    headers.forEach((name, value) -> {
      putShortString(buf, name);
      putBytes(buf, value);
    });
    return buf.array();
  }

  /** Reads a schedule-store value written by {@link #encodeEntry}. */
  public static ScheduledEntry decodeEntry(byte[] bytes) {
    ByteBuffer buf = ByteBuffer.wrap(bytes);
    byte version = buf.get();
    if (version != VERSION) {
      throw new VersionedValue.UnknownVersionException("delay schedule value has version " + version
          + "; this build reads versions [" + VERSION + "]");
    }
    long deliverAt = buf.getLong();
    String topic = new String(getShortString(buf), StandardCharsets.UTF_8);
    byte[] key = getBytes(buf);
    byte[] value = getBytes(buf);
    int count = buf.getInt();
    Map<String, byte[]> headers = new LinkedHashMap<>();
    for (int i = 0; i < count; i++) {
      headers.put(new String(getShortString(buf), StandardCharsets.UTF_8), getBytes(buf));
    }
    return new ScheduledEntry(deliverAt, topic, key, value, headers);
  }

  private static int sizeOf(byte[] bytes) {
    return 4 + (bytes == null ? 0 : bytes.length);
  }

  private static void putShortString(ByteBuffer buf, byte[] utf8) {
    if (utf8.length > 0xFFFF) {
      throw new IllegalArgumentException("name longer than 65535 bytes");
    }
    buf.putShort((short) utf8.length).put(utf8);
  }

  private static byte[] getShortString(ByteBuffer buf) {
    byte[] out = new byte[Short.toUnsignedInt(buf.getShort())];
    buf.get(out);
    return out;
  }

  private static void putBytes(ByteBuffer buf, byte[] bytes) {
    if (bytes == null) {
      buf.putInt(-1);
    } else {
      buf.putInt(bytes.length).put(bytes);
    }
  }

  private static byte[] getBytes(ByteBuffer buf) {
    int length = buf.getInt();
    if (length < 0) {
      return null;
    }
    byte[] out = new byte[length];
    buf.get(out);
    return out;
  }
}
