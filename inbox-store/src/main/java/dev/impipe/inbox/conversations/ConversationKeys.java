package dev.impipe.inbox.conversations;

import dev.impipe.runtime.streams.OrderedKey;
import java.util.Base64;
import org.apache.kafka.common.utils.Bytes;

/**
 * Key layouts of the conversation stores ({@link OrderedKey}: byte order = field order).
 *
 * <pre>
 * state   = string user, string conversation                      one user's state of one conversation
 * position = string user, int32 rank, int64 -activity, string conv a conversation's place in the list (not stored:
 *                                                                 in memory per task, {@link ConversationOrder}): pinned
 *                                                                 (rank 0) first, then the most recent activity; the
 *                                                                 cursor is its tail
 * total   = string user                                           the user's totals ({@link ConversationTotals})
 * </pre>
 */
public final class ConversationKeys {

  private static final Base64.Encoder CURSOR_ENCODER = Base64.getUrlEncoder().withoutPadding();

  private ConversationKeys() {}

  public static Bytes state(String user, String conversation) {
    return OrderedKey.key().string(user).string(conversation).bytes();
  }

  /** First state key of a user. */
  public static Bytes statesFrom(String user) {
    return OrderedKey.key().string(user).bytes();
  }

  /** Inclusive upper bound of a user's state keys. */
  public static Bytes statesTo(String user) {
    return OrderedKey.prefixEnd(statesFrom(user));
  }

  /** The conversation a state key names. */
  public static String stateConversation(Bytes key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    r.string();
    return r.string();
  }

  public static Bytes total(String user) {
    return OrderedKey.key().string(user).bytes();
  }

  /** Where a conversation stands in its user's list (the list sorts by these bytes). */
  public static Bytes order(String user, ConversationState s, String conversation) {
    return OrderedKey.key().string(user).rest(position(s.pinned(), s.activityAt(), conversation)).bytes();
  }

  /** Where a conversation with these flags stands in its user's list (a large group: by its timeline's activity). */
  public static Bytes order(String user, boolean pinned, long activityAt, String conversation) {
    return OrderedKey.key().string(user).rest(position(pinned, activityAt, conversation)).bytes();
  }

  /** First key of a user's list. */
  public static Bytes orderFrom(String user) {
    return OrderedKey.key().string(user).bytes();
  }

  /** Inclusive upper bound of a user's list. */
  public static Bytes orderTo(String user) {
    return OrderedKey.prefixEnd(orderFrom(user));
  }

  /** The first key after the position a cursor names. */
  public static Bytes orderAfter(String user, String cursor) {
    return Bytes.wrap(OrderedKey.after(OrderedKey.key().string(user).rest(positionOf(cursor)).build()));
  }

  /** The conversation an order key names. */
  public static String orderConversation(Bytes key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    r.string();
    r.int32();
    r.int64();
    return r.string();
  }

  /** The opaque cursor of an order key: the list continues after it. */
  public static String cursor(Bytes orderKey) {
    OrderedKey.Reader r = OrderedKey.read(orderKey);
    r.string();
    return CURSOR_ENCODER.encodeToString(r.rest());
  }

  private static byte[] position(boolean pinned, long activityAt, String conversation) {
    return OrderedKey.key().int32(pinned ? 0 : 1).int64(-activityAt).string(conversation).build();
  }

  /** The position bytes of a cursor, checked; {@link IllegalArgumentException} when it is not one. */
  public static byte[] positionOf(String cursor) {
    byte[] bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(cursor);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("not a list cursor", e);
    }
    OrderedKey.Reader r = OrderedKey.read(bytes);
    int rank = r.int32();
    r.int64();
    r.string();
    if (!r.atEnd() || rank < 0 || rank > 1) {
      throw new IllegalArgumentException("not a list cursor");
    }
    return bytes;
  }
}
