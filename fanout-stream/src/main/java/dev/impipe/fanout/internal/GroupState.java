package dev.impipe.fanout.internal;

import dev.impipe.runtime.streams.VersionedValue;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Per-group state of the fan-out: member count, whether the group is read-diffused ("large"), and the group's admin.
 * Written on membership changes and mode switches only, not per message.
 *
 * <p>Encoding: the original 17 bytes {@code [members i64][large u8][lastSeq i64]} (no admin recorded: groups from
 * before admins existed), or {@code [version 2][members i64][large u8][lastSeq i64][u16 length][admin UTF-8]}.
 *
 * @param lastSeq the conversation seq of the group's last record as earlier builds recorded it on every message (-1
 *     for groups of this build, which keeps one boundary per task instead: {@code TaskClock#processed}); still read
 *     as a floor of a join's boundary
 * @param admin the admin's user id; null for an empty group, or for a group created before admins were tracked
 *     (then the earliest member by join clock is the admin, see {@code MembershipProcessor})
 */
public record GroupState(long members, boolean large, long lastSeq, String admin) {

  public static final GroupState EMPTY = new GroupState(0, false, -1, null);

  private static final int LEGACY_LENGTH = 17;
  private static final byte VERSION = 2;

  public static GroupState decode(byte[] bytes) {
    if (bytes == null) {
      return EMPTY;
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    if (bytes.length == LEGACY_LENGTH) {
      return new GroupState(b.getLong(), b.get() == 1, b.getLong(), null);
    }
    byte version = b.get();
    if (version != VERSION) {
      throw new VersionedValue.UnknownVersionException("fanout-groups value has version " + version
          + "; this build reads versions [" + VERSION + "] (and the 17-byte format from before admins were kept)");
    }
    long members = b.getLong();
    boolean large = b.get() == 1;
    long lastSeq = b.getLong();
    int length = Short.toUnsignedInt(b.getShort());
    String admin = length == 0 ? null : new String(bytes, b.position(), length, StandardCharsets.UTF_8);
    return new GroupState(members, large, lastSeq, admin);
  }

  public byte[] encode() {
    byte[] a = admin == null ? new byte[0] : admin.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + LEGACY_LENGTH + 2 + a.length).put(VERSION).putLong(members)
        .put((byte) (large ? 1 : 0)).putLong(lastSeq).putShort((short) a.length).put(a).array();
  }

  /**
   * The mode the next message should use: large above {@code threshold} members, back to small below 90% of the size
   * at which it became large (hysteresis, so a group hovering around the threshold does not flip on every join).
   * 0 disables.
   */
  public boolean wantsLarge(int threshold) {
    if (threshold <= 0) {
      return false;
    }
    long largeAt = threshold + 1L;
    if (large) {
      return members * 10 >= largeAt * 9;
    }
    return members >= largeAt;
  }

  public GroupState withMembers(long count) {
    return new GroupState(count, large, lastSeq, admin);
  }

  public GroupState withAdmin(String user) {
    return new GroupState(members, large, lastSeq, user);
  }

  public GroupState withLarge(boolean nowLarge) {
    return new GroupState(members, nowLarge, lastSeq, admin);
  }
}
