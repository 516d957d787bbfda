package dev.impipe.inbox;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MessageType;
import java.time.Instant;

/** Builders of the records the inbox store reads. */
public final class TestData {

  private TestData() {}

  public static InboxEntry message(String userId, String conversationId, String body, Instant at) {
    return InboxEntry.newBuilder().setUserId(userId).setType(InboxEntryType.MESSAGE)
        .setConversationId(conversationId).setConversationSeq(-1).setMessageId("m-" + body)
        .setSenderId("sender-of-" + conversationId).setBody(body).setTimestamp(at).build();
  }

  public static DeviceCursor cursor(String userId, String deviceId, long seq) {
    return DeviceCursor.newBuilder().setUserId(userId).setDeviceId(deviceId).setSeq(seq).build();
  }

  public static ChatMessage chat(String conversationId, String senderId, String body, Instant at) {
    return ChatMessage.newBuilder().setMessageId("m-" + body).setClientMsgId("c-" + body)
        .setConversationId(conversationId).setConversationType(ConversationType.GROUP).setType(MessageType.MESSAGE)
        .setSenderId(senderId).setGroupId(conversationId).setBody(body).setSentAt(at).build();
  }
}
