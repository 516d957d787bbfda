package dev.impipe.ack.wheel;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Every byte layout of the wheel's RocksDB stores, in one place. Numbers are big-endian with the sign bit flipped,
 * so unsigned byte order (RocksDB's) equals signed numeric order. Strings are UTF-8 with a 4-byte length prefix, so a
 * key prefix names exactly one (user, device) pair: no user or device id can run into the next field.
 *
 * <pre>
 * pending key  : len(userId) userId len(deviceId) deviceId seq                       -> pending value
 * pending value: slot firstPushedAt deadline attempts(4 bytes)
 * wheel key    : slot len(userId) userId len(deviceId) deviceId seq                  -> empty value
 * acked key    : len(userId) userId len(deviceId) deviceId                           -> highest ACKed seq
 * </pre>
 */
public final class WheelCodec {

  /** The value of a wheel entry: the key says everything. */
  public static final byte[] EMPTY = new byte[0];

  private static final int LONG = Long.BYTES;
  private static final int LEN = Integer.BYTES;

  private WheelCodec() {}

  /** A decoded wheel key. */
  public record WheelKey(long slot, String userId, String deviceId, long seq) {}

  /** A decoded pending key. */
  public record PendingKey(String userId, String deviceId, long seq) {}

  /**
   * What the pending index remembers of one unACKed delivery.
   *
   * @param slot the wheel slot the entry sits in
   * @param firstPushedAt when the seq was first pushed to the device (epoch ms)
   * @param deadline when the current attempt times out (epoch ms)
   * @param attempts pushes so far
   */
  public record Pending(long slot, long firstPushedAt, long deadline, int attempts) {}

  /** The key prefix shared by every pending entry of one device; also the key of the acked store. */
  public static byte[] device(String userId, String deviceId) {
    byte[] user = utf8(userId);
    byte[] device = utf8(deviceId);
    return ByteBuffer.allocate(LEN + user.length + LEN + device.length)
        .putInt(user.length).put(user).putInt(device.length).put(device).array();
  }

  public static byte[] pending(String userId, String deviceId, long seq) {
    byte[] prefix = device(userId, deviceId);
    return ByteBuffer.allocate(prefix.length + LONG).put(prefix).putLong(ordered(seq)).array();
  }

  public static PendingKey decodePending(byte[] key) {
    ByteBuffer buf = ByteBuffer.wrap(key);
    String user = readString(buf);
    String device = readString(buf);
    return new PendingKey(user, device, unordered(buf.getLong()));
  }

  public static byte[] wheel(long slot, String userId, String deviceId, long seq) {
    byte[] middle = device(userId, deviceId);
    return ByteBuffer.allocate(LONG + middle.length + LONG)
        .putLong(ordered(slot)).put(middle).putLong(ordered(seq)).array();
  }

  /** The smallest possible key of {@code slot}: a range [slotStart(a), slotStart(b)] holds exactly slots a..b-1. */
  public static byte[] slotStart(long slot) {
    return ByteBuffer.allocate(LONG).putLong(ordered(slot)).array();
  }

  public static WheelKey decodeWheel(byte[] key) {
    ByteBuffer buf = ByteBuffer.wrap(key);
    long slot = unordered(buf.getLong());
    String user = readString(buf);
    String device = readString(buf);
    return new WheelKey(slot, user, device, unordered(buf.getLong()));
  }

  public static byte[] pendingValue(Pending p) {
    return ByteBuffer.allocate(3 * LONG + Integer.BYTES)
        .putLong(p.slot()).putLong(p.firstPushedAt()).putLong(p.deadline()).putInt(p.attempts()).array();
  }

  public static Pending decodePendingValue(byte[] value) {
    ByteBuffer buf = ByteBuffer.wrap(value);
    return new Pending(buf.getLong(), buf.getLong(), buf.getLong(), buf.getInt());
  }

  public static byte[] seqValue(long seq) {
    return ByteBuffer.allocate(LONG).putLong(seq).array();
  }

  /** An {@code ack-acked} value: the seq and when it was ACKed (read by {@link #decodeSeqValue}, too). */
  public static byte[] ackedValue(long seq, long ackedAtMs) {
    return ByteBuffer.allocate(2 * LONG).putLong(seq).putLong(ackedAtMs).array();
  }

  public static long decodeSeqValue(byte[] value) {
    return ByteBuffer.wrap(value).getLong();
  }

  /** When an {@code ack-acked} value was written; 0 for a value from before the time was kept. */
  public static long decodeAckedAt(byte[] value) {
    return value.length >= 2 * LONG ? ByteBuffer.wrap(value, LONG, LONG).getLong() : 0;
  }

  /** Flips the sign bit: big-endian bytes of the result compare (unsigned) like the signed input. */
  static long ordered(long value) {
    return value ^ Long.MIN_VALUE;
  }

  private static long unordered(long stored) {
    return stored ^ Long.MIN_VALUE;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String readString(ByteBuffer buf) {
    int length = buf.getInt();
    String s = new String(buf.array(), buf.arrayOffset() + buf.position(), length, StandardCharsets.UTF_8);
    buf.position(buf.position() + length);
    return s;
  }
}
