package dev.impipe.notify.decide;

import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.streams.VersionedValue;
import org.apache.kafka.common.utils.Bytes;

/**
 * Byte layouts of the deciding topology's own byte stores ({@link OrderedKey}: byte order = field order, so a key
 * prefix names exactly one user, device or due time; numbers big-endian with the sign bit flipped). Values are
 * {@link VersionedValue}s; the pending value is {@link PendingBurst#encode()}.
 *
 * <pre>
 * received key  : string userId, string deviceId                          -> [version 1] int64 received seq
 * pending key   : string userId, string deviceId, string conversationId   -> PendingBurst
 * due key       : int64 due (epoch ms), string userId, string deviceId, string conversationId -> empty
 * </pre>
 */
public final class NotifyKeys {

  /** The value of a due entry: the key says everything. */
  public static final byte[] EMPTY = new byte[0];

  private static final int VERSION = 1;

  private NotifyKeys() {}

  /** A decoded due key. */
  public record Due(long due, String userId, String deviceId, String conversationId) {}

  /** A decoded pending key. */
  public record Burst(String userId, String deviceId, String conversationId) {}

  public static Bytes received(String userId, String deviceId) {
    return OrderedKey.key().string(userId).string(deviceId).bytes();
  }

  public static byte[] receivedValue(long seq) {
    return VersionedValue.write(VERSION).int64(seq).build();
  }

  public static long decodeReceived(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, NotifyTopology.RECEIVED_STORE, VERSION);
    long seq = r.int64();
    r.end();
    return seq;
  }

  public static Bytes pending(String userId, String deviceId, String conversationId) {
    return OrderedKey.key().string(userId).string(deviceId).string(conversationId).bytes();
  }

  /** The first pending key of a device: with {@link #pendingTo} the range of all its conversations. */
  public static Bytes pendingFrom(String userId, String deviceId) {
    return OrderedKey.key().string(userId).string(deviceId).bytes();
  }

  /** The inclusive end of a device's pending keys. */
  public static Bytes pendingTo(String userId, String deviceId) {
    return OrderedKey.prefixEnd(pendingFrom(userId, deviceId));
  }

  public static Burst decodePending(Bytes key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    return new Burst(r.string(), r.string(), r.string());
  }

  public static Bytes due(long due, String userId, String deviceId, String conversationId) {
    return OrderedKey.key().int64(due).string(userId).string(deviceId).string(conversationId).bytes();
  }

  /** The smallest key of due time {@code due}: the range [dueStart(a), dueStart(b)] holds the times a..b-1. */
  public static Bytes dueStart(long due) {
    return OrderedKey.key().int64(due).bytes();
  }

  public static Due decodeDue(Bytes key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    Due d = new Due(r.int64(), r.string(), r.string(), r.string());
    if (!r.atEnd()) {
      throw new IllegalArgumentException("not a due key: bytes after its fields");
    }
    return d;
  }
}
