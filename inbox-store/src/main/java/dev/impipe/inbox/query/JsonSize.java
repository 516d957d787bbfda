package dev.impipe.inbox.query;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import java.util.Map;

/**
 * What an entry costs in a JSON answer, in bytes, without writing it: strings as the JSON writer encodes them
 * (UTF-8, control characters and surrogates escaped, up to 6 bytes per character), plus a fixed allowance for the field names,
 * numbers and punctuation. An upper bound for every field but the strings, which are exact; used to cut pages by
 * bytes ({@link PageBytes}).
 */
public final class JsonSize {

  /** Field names, numbers (at most 20 digits each), booleans and punctuation of one inbox entry or message. */
  static final long ENTRY_OVERHEAD = 512;

  private JsonSize() {}

  /** Bytes of {@code text} as a JSON string value, quotes included; {@code null} is written as {@code null}. */
  public static long string(String text) {
    if (text == null) {
      return 4;
    }
    long bytes = 2;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x20) {
        bytes += c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f' ? 2 : 6;
      } else if (c == '"' || c == '\\') {
        bytes += 2;
      } else if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isSurrogate(c)) {
        bytes += 6; // the writer escapes each half of a pair (Jackson's default: surrogates are not combined)
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }

  /** Bytes of one inbox entry in an inbox or sync page (at most). */
  public static long entry(InboxEntry e) {
    return ENTRY_OVERHEAD + string(e.getConversationId()) + string(e.getMessageId()) + string(e.getSenderId())
        + string(e.getBody()) + string(e.getRefMessageId()) + string(e.getClientMsgId()) + string(e.getRejectedOp())
        + string(e.getTargetUserId()) + string(e.getReasonCode()) + string(e.getReason())
        + string(e.getRecalledBy());
  }

  /** Bytes of one message in a history page (at most). */
  public static long message(ChatMessage m) {
    long bytes = ENTRY_OVERHEAD + string(m.getConversationId()) + string(m.getMessageId())
        + string(m.getClientMsgId()) + string(m.getSenderId()) + string(m.getSenderDeviceId())
        + string(m.getRecipientId()) + string(m.getGroupId()) + string(m.getBody()) + string(m.getRefMessageId());
    for (Map.Entry<String, String> a : m.getAttributes().entrySet()) {
      bytes += string(a.getKey()) + string(a.getValue()) + 2;
    }
    return bytes;
  }
}
