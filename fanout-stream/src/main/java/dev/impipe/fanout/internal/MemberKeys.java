package dev.impipe.fanout.internal;

import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.streams.VersionedValue;
import org.apache.kafka.common.utils.Bytes;

/**
 * Byte layouts of the membership stores ({@code fanout-members}, {@code fanout-past-members}). Keys are
 * {@link OrderedKey}s {@code string groupId, string userId}: a group's members are one exact prefix range (group
 * "g1" never matches members of "g10"). Values are {@link VersionedValue}s: {@code [version 1] int64 joinedAt} (the
 * task clock at the join) in the members store, {@code [version 1] int64 joined, int64 left} in the past-members
 * store.
 */
public final class MemberKeys {

  private static final int VERSION = 1;

  private MemberKeys() {}

  public static Bytes key(String groupId, String userId) {
    return OrderedKey.key().string(groupId).string(userId).bytes();
  }

  public static Bytes groupPrefix(String groupId) {
    return OrderedKey.key().string(groupId).bytes();
  }

  /**
   * The end of {@code groupId}'s range, for stores that take a key range, not a prefix: {@code [groupPrefix,
   * groupEnd]} is exactly the group's keys (see {@link OrderedKey#prefixEnd}).
   */
  public static Bytes groupEnd(String groupId) {
    return OrderedKey.prefixEnd(groupPrefix(groupId));
  }

  public static String userId(Bytes key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    r.string();
    return r.string();
  }

  /** The value: the task clock reading when the member joined. */
  public static byte[] joinedAt(long clock) {
    return VersionedValue.write(VERSION).int64(clock).build();
  }

  public static long joinedAt(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, "fanout-members", VERSION);
    long clock = r.int64();
    r.end();
    return clock;
  }

  /** A past membership: joined at clock {@code joined}, left at clock {@code left}. */
  public static byte[] period(long joined, long left) {
    return VersionedValue.write(VERSION).int64(joined).int64(left).build();
  }

  /** Whether the past membership {@code period} covers clock {@code at} (the user was a member then). */
  public static boolean covers(byte[] period, long at) {
    VersionedValue.Reader r = VersionedValue.read(period, "fanout-past-members", VERSION);
    return r.int64() < at && at < r.int64();
  }
}
