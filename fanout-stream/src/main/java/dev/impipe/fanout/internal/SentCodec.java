package dev.impipe.fanout.internal;

import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.streams.VersionedValue;
import org.apache.kafka.common.utils.Bytes;

/**
 * Byte layouts of the fan-out's dedupe and sent stores: keys are {@link OrderedKey}s, values
 * {@link VersionedValue}s.
 *
 * <pre>
 * dedupe key  : string senderId, string conversationId, string clientMsgId     -> [version 1] string messageId
 * sent key    : string messageId                                                -> sent value
 * sent value  : [version 1] string senderId, string conversationId, int64 clock, int8 mode, int64 seq,
 *               int64 sentAt, string clientMsgId      (mode: 'W', 'T', or 0 when not known)
 * </pre>
 */
public final class SentCodec {

  private static final int VERSION = 1;

  private SentCodec() {}

  /** What the sent store remembers of a MESSAGE, for its recall. */
  public record Sent(String senderId, String conversationId, long clock, char mode, long seq, long sentAt,
      String clientMsgId) {}

  public static Bytes dedupeKey(String senderId, String conversationId, String clientMsgId) {
    return OrderedKey.key().string(senderId).string(conversationId).string(clientMsgId).bytes();
  }

  public static byte[] dedupeValue(String messageId) {
    return VersionedValue.write(VERSION).string(messageId).build();
  }

  public static String dedupeMessageId(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, "fanout-dedupe", VERSION);
    String messageId = r.string();
    r.end();
    return messageId;
  }

  public static Bytes sentKey(String messageId) {
    return OrderedKey.key().string(messageId).bytes();
  }

  public static byte[] sentValue(Sent s) {
    return VersionedValue.write(VERSION).string(s.senderId()).string(s.conversationId()).int64(s.clock())
        .int8(s.mode()).int64(s.seq()).int64(s.sentAt()).string(s.clientMsgId()).build();
  }

  public static Sent decodeSent(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, "fanout-sent", VERSION);
    Sent s = new Sent(r.string(), r.string(), r.int64(), (char) r.int8(), r.int64(), r.int64(), r.string());
    r.end();
    return s;
  }
}
