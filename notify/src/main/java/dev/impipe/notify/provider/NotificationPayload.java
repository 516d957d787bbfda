package dev.impipe.notify.provider;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.avro.Notification;
import java.nio.charset.StandardCharsets;

/**
 * The JSON a device receives (DESIGN "Notifications"): {@code notificationId, conversationId, conversationType,
 * senderId, preview?, seq, count, unreadTotal?}. Nothing else of the record (endpoint, keys, tokens) leaves.
 */
public final class NotificationPayload {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private NotificationPayload() {}

  public static ObjectNode json(Notification n) {
    ObjectNode json = MAPPER.createObjectNode();
    json.put("notificationId", n.getNotificationId());
    json.put("conversationId", n.getConversationId());
    json.put("conversationType", n.getConversationType());
    json.put("senderId", n.getSenderId());
    if (n.getPreview() != null) {
      json.put("preview", n.getPreview());
    }
    json.put("seq", n.getSeq());
    json.put("count", n.getCount());
    if (n.getUnreadTotal() != null) {
      json.put("unreadTotal", n.getUnreadTotal());
    }
    return json;
  }

  public static byte[] bytes(Notification n) {
    return json(n).toString().getBytes(StandardCharsets.UTF_8);
  }
}
