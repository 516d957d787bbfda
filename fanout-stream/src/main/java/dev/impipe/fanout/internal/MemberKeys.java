package dev.impipe.fanout.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.utils.Bytes;

/**
 * Key layout of the membership store: {@code [u16 length of groupId][groupId][userId]} (UTF-8), value the task
 * clock at the join. The length prefix
 * makes a group's members one exact prefix range: group "g1" never matches members of "g10".
 */
public final class MemberKeys {

  private MemberKeys() {}

  public static Bytes key(String groupId, String userId) {
    byte[] group = groupId.getBytes(StandardCharsets.UTF_8);
    byte[] user = userId.getBytes(StandardCharsets.UTF_8);
    return Bytes.wrap(ByteBuffer.allocate(2 + group.length + user.length)
        .putShort((short) group.length).put(group).put(user).array());
  }

  public static Bytes groupPrefix(String groupId) {
    byte[] group = groupId.getBytes(StandardCharsets.UTF_8);
    return Bytes.wrap(ByteBuffer.allocate(2 + group.length).putShort((short) group.length).put(group).array());
  }

  /**
   * The last key of {@code groupId}'s range, inclusive: its prefix followed by 0xFF, a byte no UTF-8 user id holds,
   * so {@code [groupPrefix, groupEnd]} is exactly the group's keys (for stores that take a key range, not a prefix).
   */
  public static Bytes groupEnd(String groupId) {
    byte[] prefix = groupPrefix(groupId).get();
    byte[] end = java.util.Arrays.copyOf(prefix, prefix.length + 1);
    end[prefix.length] = (byte) 0xFF;
    return Bytes.wrap(end);
  }

  public static String userId(Bytes key) {
    byte[] raw = key.get();
    int groupLength = Short.toUnsignedInt(ByteBuffer.wrap(raw, 0, 2).getShort());
    return new String(raw, 2 + groupLength, raw.length - 2 - groupLength, StandardCharsets.UTF_8);
  }

  /** The value: the task clock reading when the member joined. */
  public static byte[] joinedAt(long clock) {
    return ByteBuffer.allocate(8).putLong(clock).array();
  }

  public static long joinedAt(byte[] value) {
    return ByteBuffer.wrap(value).getLong();
  }

  /** A past membership: joined at clock {@code joined}, left at clock {@code left}. */
  public static byte[] period(long joined, long left) {
    return java.nio.ByteBuffer.allocate(2 * Long.BYTES).putLong(joined).putLong(left).array();
  }

  /** Whether the past membership {@code period} covers clock {@code at} (the user was a member then). */
  public static boolean covers(byte[] period, long at) {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(period);
    return b.getLong() < at && at < b.getLong();
  }
}
