package dev.impipe.inbox.internal;

import dev.impipe.runtime.streams.OrderedKey;
import org.apache.kafka.common.utils.Bytes;

/**
 * Every RocksDB key layout of the inbox store, in one place, built with {@link OrderedKey}: strings escaped and
 * terminated, numbers big-endian with the sign bit flipped, so byte order (RocksDB's and {@link Bytes#compareTo}:
 * unsigned lexicographic) is the fields' order, and the range of {@code bob} can never reach into {@code bobby}.
 *
 * <pre>
 * owner          = string owner                     owner = user id (inbox) or conversation id (timeline)
 * timeline entry = string owner, int64 seq          (seq never negative)
 * cursor         = string user, string device
 * group position = string user, string device, string group   a device's position in a large group's timeline
 * time index     = int64 timestamp, rest timeline entry  (timestamps below 0 are stored as 0)
 * user group     = string user, string group        large groups (a user's read-diffused intervals in the group)
 *                                                    and memberships (the seq from which the user reads the group)
 * received       = string owner, string messageId   the recall index
 * copied         = string owner, int32 prevGeneration, int64 prevSeq   where a copied entry was before a grow
 * copy applied   = string "copy-applied"             one key per partition: the copied entries are all applied
 * </pre>
 */
public final class StoreKeys {

  private StoreKeys() {}

  /** The key of one owner: counts per user are kept under it. */
  public static Bytes owner(String owner) {
    return OrderedKey.key().string(owner).bytes();
  }

  /** The key of the entry at {@code seq} of an owner's timeline. */
  public static Bytes entry(String owner, long seq) {
    requireNonNegative(seq, "seq");
    return OrderedKey.key().string(owner).int64(seq).bytes();
  }

  /** The owner of a timeline entry key. */
  public static String entryOwner(Bytes entry) {
    return OrderedKey.read(entry).string();
  }

  /** The seq of a timeline entry key. */
  public static long entrySeq(Bytes entry) {
    OrderedKey.Reader r = OrderedKey.read(entry);
    r.string();
    return r.int64();
  }

  /** The key of one device's cursor. */
  public static Bytes cursor(String user, String device) {
    return OrderedKey.key().string(user).string(device).bytes();
  }

  /** The key of one device's position in a large group's timeline (kept in the cursor store, after its cursor). */
  public static Bytes groupPosition(String user, String device, String group) {
    return OrderedKey.key().string(user).string(device).string(group).bytes();
  }

  /**
   * The cursor-store key of a commit on {@code im.device-cursors} by {@code user} for {@code deviceId}: a device id
   * {@code <device>#<group>} (how the topic names a device's position in a large group, see
   * {@code SyncCursor#groupDevice}; '#' is in no device or group id) is a {@link #groupPosition}, any other a
   * {@link #cursor}.
   */
  public static Bytes committed(String user, String deviceId) {
    int hash = deviceId.indexOf('#');
    return hash < 0 ? cursor(user, deviceId)
        : groupPosition(user, deviceId.substring(0, hash), deviceId.substring(hash + 1));
  }

  /**
   * The key of {@code user} in {@code group} in the stores kept per (user, group): the user's read-diffused intervals
   * of a large group ({@code large-groups}), the user's membership of a group ({@code conversation-memberships}).
   */
  public static Bytes userGroup(String user, String group) {
    return OrderedKey.key().string(user).string(group).bytes();
  }

  /** The key of the recall index: which inbox seq of {@code owner} holds message {@code messageId}. */
  public static Bytes received(String owner, String messageId) {
    return OrderedKey.key().string(owner).string(messageId).bytes();
  }

  /**
   * The key of the copy index: the entry of {@code owner}'s timeline that was at {@code prevSeq} of inbox generation
   * {@code prevGeneration} before {@code bin/im inbox grow} copied it (headers {@code im.prev-generation},
   * {@code im.prev-seq}).
   */
  public static Bytes copied(String owner, int prevGeneration, long prevSeq) {
    requireNonNegative(prevSeq, "prevSeq");
    return OrderedKey.key().string(owner).int32(prevGeneration).int64(prevSeq).bytes();
  }

  /** The previous seq of a {@link #copied} key. */
  public static long copiedPrevSeq(Bytes key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    r.string();
    r.int32();
    return r.int64();
  }

  /** The one key of the {@code inbox-copy-applied} store (per partition: one store per task). */
  public static Bytes copyApplied() {
    return OrderedKey.key().string("copy-applied").bytes();
  }

  /** Inclusive upper bound of every {@link #copied} key of {@code owner} and {@code prevGeneration}. */
  public static Bytes copiedTo(String owner, int prevGeneration) {
    return copied(owner, prevGeneration, Long.MAX_VALUE);
  }

  /** Inclusive lower bound of every {@link #userGroup} key of {@code user}. */
  public static Bytes userGroupsFrom(String user) {
    return owner(user);
  }

  /** Inclusive upper bound of every {@link #userGroup} key of {@code user} (see {@link OrderedKey#prefixEnd}). */
  public static Bytes userGroupsTo(String user) {
    return OrderedKey.prefixEnd(owner(user));
  }

  /** The group id of a {@link #userGroup} key. */
  public static String userGroupId(Bytes key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    r.string();
    return r.string();
  }

  /** The time-index key of a timeline entry written at {@code timestamp}. */
  public static Bytes timeIndex(long timestamp, Bytes entry) {
    return OrderedKey.key().int64(Math.max(0, timestamp)).rest(entry.get()).bytes();
  }

  /** Lowest possible time-index key. */
  public static Bytes timeIndexStart() {
    return OrderedKey.key().int64(0).bytes();
  }

  /**
   * Inclusive upper bound of the time-index entries older than {@code cutoff}: the bare timestamp sorts after every
   * key with a smaller timestamp and before every key with this timestamp (they are longer, same prefix).
   */
  public static Bytes timeIndexBefore(long cutoff) {
    return OrderedKey.key().int64(Math.max(0, cutoff)).bytes();
  }

  /** The timeline entry key a time-index key points to. */
  public static Bytes timeIndexEntry(Bytes index) {
    OrderedKey.Reader r = OrderedKey.read(index);
    r.int64();
    return Bytes.wrap(r.rest());
  }

  /** The timestamp of a time-index key. */
  public static long timeIndexTime(Bytes index) {
    return OrderedKey.read(index).int64();
  }

  private static void requireNonNegative(long value, String name) {
    if (value < 0) {
      throw new IllegalArgumentException(name + " must not be negative, got " + value);
    }
  }
}
