package dev.impipe.inbox.conversations;

import dev.impipe.runtime.domain.Ids;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON of the conversation list (field names are the public API, see DESIGN "Conversations"). */
public final class ConversationJson {

  private ConversationJson() {}

  /** {@code {"userId", "conversations": [...], "unreadTotal", "unreadTotalCapped", "next"}}. */
  public static Map<String, Object> list(String user, ConversationList.ListPage page) {
    List<Object> conversations = new ArrayList<>(page.conversations().size());
    for (ConversationList.Item item : page.conversations()) {
      Map<String, Object> c = conversation(user, item.conversationId(), item.state());
      c.put("unreadCapped", item.unreadCapped());
      conversations.add(c);
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("userId", user);
    json.put("conversations", conversations);
    json.put("unreadTotal", page.unreadTotal());
    json.put("unreadTotalCapped", page.unreadTotalCapped());
    json.put("next", page.next());
    return json;
  }

  /** One conversation of {@code user}'s list. */
  public static Map<String, Object> conversation(String user, String conversationId, ConversationState s) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("conversationId", conversationId);
    boolean direct = Ids.isDirect(conversationId);
    json.put("type", direct ? "DIRECT" : "GROUP");
    if (direct) {
      json.put("peerId", peer(user, conversationId));
    }
    json.put("member", s.member());
    json.put("last", last(s.last()));
    json.put("unread", s.unread());
    json.put("readUpToSeq", s.readUpToSeq());
    json.put("muted", s.muted());
    json.put("pinned", s.pinned());
    json.put("updatedAt", s.updatedAt());
    if (!direct) {
      json.put("largeGroup", s.large());
    }
    return json;
  }

  /** A large group's summary, as the timeline's owner answers it to a member's list. */
  public static Map<String, Object> summary(LargeGroupCounts.Summary s) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("last", last(s.last()));
    json.put("unread", s.unread());
    json.put("capped", s.capped());
    return json;
  }

  /** Reads what {@link #summary} wrote; {@link IllegalArgumentException} when it is not one. */
  public static LargeGroupCounts.Summary summary(com.fasterxml.jackson.databind.JsonNode json) {
    com.fasterxml.jackson.databind.JsonNode last = json.get("last");
    com.fasterxml.jackson.databind.JsonNode unread = json.get("unread");
    if (unread == null || !unread.canConvertToLong()) {
      throw new IllegalArgumentException("not a large group summary");
    }
    ConversationState.Last l = null;
    if (last != null && !last.isNull()) {
      boolean recalled = last.path("recalled").asBoolean(false);
      l = new ConversationState.Last(last.path("conversationSeq").asLong(), text(last, "messageId"),
          text(last, "senderId"), text(last, "type"), recalled ? null : text(last, "body"),
          last.path("timestamp").asLong(), recalled);
    }
    return new LargeGroupCounts.Summary(l, unread.asLong(), json.path("capped").asBoolean(false));
  }

  private static String text(com.fasterxml.jackson.databind.JsonNode json, String field) {
    com.fasterxml.jackson.databind.JsonNode v = json.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static Map<String, Object> last(ConversationState.Last last) {
    if (last == null) {
      return null;
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("conversationSeq", last.conversationSeq());
    json.put("messageId", last.messageId());
    json.put("senderId", last.senderId());
    json.put("type", last.type());
    json.put("body", last.recalled() ? null : last.body());
    json.put("timestamp", last.timestamp());
    if (last.recalled()) {
      json.put("recalled", true);
    }
    return json;
  }

  /** The other party of a direct conversation {@code d:<a>:<b>}; the user themselves for a chat with oneself. */
  static String peer(String user, String conversationId) {
    String[] parties = conversationId.split(":", -1);
    if (parties.length != 3) {
      return null;
    }
    return parties[1].equals(user) ? parties[2] : parties[1];
  }
}
