package dev.impipe.fanout.internal;

import java.nio.ByteBuffer;

/**
 * Per-group state of the fan-out: member count, whether the group is read-diffused ("large"), and the conversation
 * seq of the last message processed for it (joins and leaves take effect right after it).
 */
public record GroupState(long members, boolean large, long lastSeq) {

  public static final GroupState EMPTY = new GroupState(0, false, -1);

  public static GroupState decode(byte[] bytes) {
    if (bytes == null) {
      return EMPTY;
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    return new GroupState(b.getLong(), b.get() == 1, b.getLong());
  }

  public byte[] encode() {
    return ByteBuffer.allocate(17).putLong(members).put((byte) (large ? 1 : 0)).putLong(lastSeq).array();
  }

  /** The conversation seq from which a join or leave processed now takes effect. */
  public long nextSeq() {
    return lastSeq + 1;
  }

  /**
   * The mode the next message should use: large at or above {@code threshold} members, back to small below 90% of
   * it (hysteresis, so a group hovering around the threshold does not flip on every join). 0 disables.
   */
  public boolean wantsLarge(int threshold) {
    if (threshold <= 0) {
      return false;
    }
    if (large) {
      return members * 10 >= threshold * 9L;
    }
    return members >= threshold;
  }

  public GroupState withMembers(long count) {
    return new GroupState(count, large, lastSeq);
  }

  public GroupState afterMessage(boolean nowLarge, long seq) {
    return new GroupState(members, nowLarge, seq);
  }
}
