package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.streams.VersionedValue;

/**
 * Every byte layout of the wheel's RocksDB stores, in one place. Keys are {@link OrderedKey}s (strings escaped and
 * terminated, numbers big-endian with the sign bit flipped), so RocksDB's byte order is the fields' order and a key
 * prefix names exactly one (user, device) pair: no user or device id can run into the next field. Values are
 * {@link VersionedValue}s (version byte first).
 *
 * <pre>
 * pending key  : string userId, string deviceId, int64 seq                  -> pending value
 * pending value: [version 1] int64 slot, int64 firstPushedAt, int64 deadline, int32 attempts
 * wheel key    : int64 slot, string userId, string deviceId, int64 seq      -> empty value
 * acked key    : string userId, string deviceId                             -> acked value
 * acked value  : [version 1] int64 highest ACKed seq, int64 ackedAt (epoch ms)
 * </pre>
 */
public final class WheelCodec {

  /** The value of a wheel entry: the key says everything. */
  public static final byte[] EMPTY = new byte[0];

  private static final int VERSION = 1;

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
    return OrderedKey.key().string(userId).string(deviceId).build();
  }

  public static byte[] pending(String userId, String deviceId, long seq) {
    return OrderedKey.key().string(userId).string(deviceId).int64(seq).build();
  }

  public static PendingKey decodePending(byte[] key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    return new PendingKey(r.string(), r.string(), r.int64());
  }

  public static byte[] wheel(long slot, String userId, String deviceId, long seq) {
    return OrderedKey.key().int64(slot).string(userId).string(deviceId).int64(seq).build();
  }

  /** The smallest possible key of {@code slot}: a range [slotStart(a), slotStart(b)] holds exactly slots a..b-1. */
  public static byte[] slotStart(long slot) {
    return OrderedKey.key().int64(slot).build();
  }

  public static WheelKey decodeWheel(byte[] key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    return new WheelKey(r.int64(), r.string(), r.string(), r.int64());
  }

  public static byte[] pendingValue(Pending p) {
    return VersionedValue.write(VERSION).int64(p.slot()).int64(p.firstPushedAt()).int64(p.deadline())
        .int32(p.attempts()).build();
  }

  public static Pending decodePendingValue(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, AckWheelTopology.PENDING_STORE, VERSION);
    Pending p = new Pending(r.int64(), r.int64(), r.int64(), r.int32());
    r.end();
    return p;
  }

  /** An {@code ack-acked} value: the seq and when it was ACKed. */
  public static byte[] ackedValue(long seq, long ackedAtMs) {
    return VersionedValue.write(VERSION).int64(seq).int64(ackedAtMs).build();
  }

  /** The highest ACKed seq of an {@code ack-acked} value. */
  public static long decodeSeqValue(byte[] value) {
    return ackedReader(value).int64();
  }

  /** When an {@code ack-acked} value was written (epoch ms). */
  public static long decodeAckedAt(byte[] value) {
    VersionedValue.Reader r = ackedReader(value);
    r.int64();
    return r.int64();
  }

  private static VersionedValue.Reader ackedReader(byte[] value) {
    return VersionedValue.read(value, AckWheelTopology.ACKED_STORE, VERSION);
  }
}
