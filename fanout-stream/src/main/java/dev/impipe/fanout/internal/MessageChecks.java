package dev.impipe.fanout.internal;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.runtime.domain.Ids;

/** The checks every record of {@code im.messages} must pass before the fan-out looks at any state. */
final class MessageChecks {

  private MessageChecks() {}

  /** Why {@code m}, keyed {@code key}, is invalid (the reason in {@code im.rejected}), or null when it is valid. */
  static String invalid(String key, ChatMessage m) {
    if (!Ids.valid(m.getSenderId())) {
      return "invalid senderId '" + m.getSenderId() + "'";
    }
    if (m.getMessageId() == null || m.getMessageId().isBlank() || m.getClientMsgId() == null
        || m.getClientMsgId().isBlank()) {
      return "messageId and clientMsgId are required";
    }
    if (!m.getConversationId().equals(key)) {
      return "message of conversation " + m.getConversationId() + " is keyed '" + key
          + "': it must be keyed by its conversationId (one partition per conversation keeps it in order)";
    }
    if (m.getConversationType() == ConversationType.DIRECT) {
      if (!Ids.valid(m.getRecipientId())) {
        return "direct message without a valid recipientId";
      }
      String expected = Ids.direct(m.getSenderId(), m.getRecipientId());
      if (!expected.equals(m.getConversationId())) {
        return "direct conversationId must be " + expected + ", got " + m.getConversationId();
      }
    } else {
      if (!Ids.valid(m.getGroupId()) || !m.getGroupId().equals(m.getConversationId())) {
        return "group message needs groupId equal to its conversationId, got groupId=" + m.getGroupId()
            + " conversationId=" + m.getConversationId();
      }
    }
    switch (m.getType()) {
      case UNKNOWN -> {
        return "unknown message type (written by a newer producer?)";
      }
      case READ -> {
        if (m.getReadUpToSeq() == null || m.getReadUpToSeq() < 0) {
          return "READ needs readUpToSeq >= 0";
        }
      }
      case RECALL -> {
        if (m.getRefMessageId() == null || m.getRefMessageId().isBlank()) {
          return "RECALL needs refMessageId";
        }
      }
      case JOIN, LEAVE -> {
        if (m.getConversationType() != ConversationType.GROUP) {
          return m.getType() + " needs a group conversation";
        }
        if (!Ids.valid(m.getMemberId())) {
          return m.getType() + " needs a valid memberId, got '" + m.getMemberId() + "'";
        }
      }
      default -> {
      }
    }
    return null;
  }
}
