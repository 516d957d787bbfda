package dev.impipe.inbox.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.utils.Bytes;

/**
 * Every RocksDB key layout of the inbox store, in one place. Numbers are big-endian and never negative, so byte
 * order (RocksDB's and {@link Bytes#compareTo}: unsigned lexicographic) is numeric order. Ids are length-prefixed,
 * so the range of {@code bob} can never reach into {@code bobby}.
 *
 * <pre>
 * id             = int32 length | UTF-8 bytes
 * timeline entry = id(owner) | int64 seq            owner = user id (inbox) or conversation id (timeline)
 * cursor         = id(user) | id(device)
 * time index     = int64 timestamp | timeline entry  (timestamps below 0 are stored as 0)
 * large group    = id(user) | id(group)             a user's read-diffused intervals in one large group
 * membership     = id(user) | id(group)             the conversation seq from which the user reads a group
 * </pre>
 */
public final class StoreKeys {

  private static final int LONG = Long.BYTES;
  private static final int LENGTH = Integer.BYTES;

  private StoreKeys() {}

  /** The key of one owner: counts per user are kept under it. */
  public static Bytes owner(String owner) {
    byte[] id = utf8(owner);
    return Bytes.wrap(ByteBuffer.allocate(LENGTH + id.length).putInt(id.length).put(id).array());
  }

  /** The key of the entry at {@code seq} of an owner's timeline. */
  public static Bytes entry(String owner, long seq) {
    requireNonNegative(seq, "seq");
    byte[] id = utf8(owner);
    return Bytes.wrap(ByteBuffer.allocate(LENGTH + id.length + LONG).putInt(id.length).put(id).putLong(seq).array());
  }

  /** The owner of a timeline entry key. */
  public static String entryOwner(Bytes entry) {
    ByteBuffer buf = ByteBuffer.wrap(entry.get());
    int length = buf.getInt();
    return new String(entry.get(), LENGTH, length, StandardCharsets.UTF_8);
  }

  /** The seq of a timeline entry key. */
  public static long entrySeq(Bytes entry) {
    byte[] raw = entry.get();
    return ByteBuffer.wrap(raw, raw.length - LONG, LONG).getLong();
  }

  /** The key of one device's cursor. */
  public static Bytes cursor(String user, String device) {
    byte[] u = utf8(user);
    byte[] d = utf8(device);
    return Bytes.wrap(ByteBuffer.allocate(2 * LENGTH + u.length + d.length)
        .putInt(u.length).put(u).putInt(d.length).put(d).array());
  }

  /** The key of a user's read-diffused intervals in a group. */
  public static Bytes largeGroup(String user, String group) {
    return cursor(user, group);
  }

  /** The key of a user's membership of a group (history read access). */
  public static Bytes membership(String user, String group) {
    return cursor(user, group);
  }

  /** The key of the recall index: which inbox seq of {@code owner} holds message {@code messageId}. */
  public static Bytes received(String owner, String messageId) {
    return cursor(owner, messageId);
  }

  /** Inclusive lower bound of every large-group key of {@code user}: the bare {@code id(user)} sorts first. */
  public static Bytes largeGroupsFrom(String user) {
    return owner(user);
  }

  /**
   * Inclusive upper bound of every large-group key of {@code user}: {@code id(user)} then 0xFF, above the first byte
   * of any group id's length (ids are far shorter than 2^24 bytes, so that byte is 0).
   */
  public static Bytes largeGroupsTo(String user) {
    byte[] prefix = owner(user).get();
    byte[] to = java.util.Arrays.copyOf(prefix, prefix.length + 1);
    to[prefix.length] = (byte) 0xFF;
    return Bytes.wrap(to);
  }

  /** The group id of a large-group key. */
  public static String largeGroupId(Bytes key) {
    ByteBuffer buf = ByteBuffer.wrap(key.get());
    int userLength = buf.getInt();
    buf.position(LENGTH + userLength);
    int groupLength = buf.getInt();
    return new String(key.get(), 2 * LENGTH + userLength, groupLength, StandardCharsets.UTF_8);
  }

  /** The time-index key of a timeline entry written at {@code timestamp}. */
  public static Bytes timeIndex(long timestamp, Bytes entry) {
    byte[] e = entry.get();
    return Bytes.wrap(ByteBuffer.allocate(LONG + e.length).putLong(Math.max(0, timestamp)).put(e).array());
  }

  /** Lowest possible time-index key. */
  public static Bytes timeIndexStart() {
    return Bytes.wrap(new byte[LONG]);
  }

  /**
   * Inclusive upper bound of the time-index entries older than {@code cutoff}: the bare 8-byte timestamp sorts after
   * every key with a smaller timestamp and before every key with this timestamp (they are longer, same prefix).
   */
  public static Bytes timeIndexBefore(long cutoff) {
    return Bytes.wrap(ByteBuffer.allocate(LONG).putLong(Math.max(0, cutoff)).array());
  }

  /** The timeline entry key a time-index key points to. */
  public static Bytes timeIndexEntry(Bytes index) {
    byte[] raw = index.get();
    byte[] entry = new byte[raw.length - LONG];
    System.arraycopy(raw, LONG, entry, 0, entry.length);
    return Bytes.wrap(entry);
  }

  /** The timestamp of a time-index key. */
  public static long timeIndexTime(Bytes index) {
    return ByteBuffer.wrap(index.get(), 0, LONG).getLong();
  }

  private static byte[] utf8(String id) {
    if (id == null) {
      throw new IllegalArgumentException("id must not be null");
    }
    return id.getBytes(StandardCharsets.UTF_8);
  }

  private static void requireNonNegative(long value, String name) {
    if (value < 0) {
      throw new IllegalArgumentException(name + " must not be negative, got " + value);
    }
  }
}
