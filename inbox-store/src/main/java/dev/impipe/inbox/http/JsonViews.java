package dev.impipe.inbox.http;

import dev.impipe.avro.ChatMessage;
import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.query.MergedSync;
import dev.impipe.runtime.domain.Ids;
import java.time.Instant;
import dev.impipe.inbox.query.Page;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The JSON bodies of the sync and history API (DESIGN.md's contract): plain maps in a fixed field order. */
public final class JsonViews {

  private JsonViews() {}

  /** {@code {"userId", "entries": [...], "next", "hasMore"}}. */
  public static Map<String, Object> inboxPage(String userId, Page<InboxEntry> page) {
    List<Object> entries = new ArrayList<>(page.entries().size());
    page.entries().forEach(e -> entries.add(inboxEntry(e.seq(), e.value())));
    return envelope("userId", userId, entries, page);
  }

  /** {@code {"conversationId", "entries": [...], "next", "hasMore"}}, entries newest first. */
  public static Map<String, Object> historyPage(String conversationId, Page<ChatMessage> page) {
    List<Object> entries = new ArrayList<>(page.entries().size());
    page.entries().forEach(e -> entries.add(message(e.seq(), e.value())));
    return envelope("conversationId", conversationId, entries, page);
  }

  /** One inbox entry; absent optional fields are {@code null}, times are epoch milliseconds. */
  public static Map<String, Object> inboxEntry(long seq, InboxEntry entry) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("seq", seq);
    json.put("type", entry.getType().name());
    json.put("conversationId", entry.getConversationId());
    json.put("conversationSeq", entry.getConversationSeq());
    json.put("messageId", entry.getMessageId());
    json.put("senderId", entry.getSenderId());
    json.put("body", entry.getBody());
    json.put("refMessageId", entry.getRefMessageId());
    json.put("readUpToSeq", entry.getReadUpToSeq());
    json.put("timestamp", entry.getTimestamp().toEpochMilli());
    if (entry.getTimelineFromSeq() != null) {
      json.put("timelineFromSeq", entry.getTimelineFromSeq());
    }
    if (entry.getReadDiffusion() != null) {
      json.put("readDiffusion", entry.getReadDiffusion());
    }
    // REJECTED entries: what was refused and why.
    putIfSet(json, "clientMsgId", entry.getClientMsgId());
    putIfSet(json, "rejectedOp", entry.getRejectedOp());
    putIfSet(json, "targetUserId", entry.getTargetUserId());
    putIfSet(json, "reasonCode", entry.getReasonCode());
    putIfSet(json, "reason", entry.getReason());
    // A recalled MESSAGE: served without its body, marked.
    if (entry.getRecalledBy() != null) {
      json.put("recalled", true);
      json.put("recalledBy", entry.getRecalledBy());
    }
    return json;
  }

  /** The inverse of {@link #inboxEntry(long, InboxEntry)} (without the seq), for pages read from another instance. */
  public static InboxEntry inboxEntry(String userId, JsonNode json) {
    return InboxEntry.newBuilder()
        .setUserId(userId)
        .setType(InboxEntryType.valueOf(json.get("type").asText()))
        .setConversationId(json.get("conversationId").asText())
        .setConversationSeq(json.get("conversationSeq").asLong())
        .setMessageId(text(json, "messageId"))
        .setSenderId(text(json, "senderId"))
        .setBody(text(json, "body"))
        .setRefMessageId(text(json, "refMessageId"))
        .setReadUpToSeq(json.hasNonNull("readUpToSeq") ? json.get("readUpToSeq").asLong() : null)
        .setTimestamp(Instant.ofEpochMilli(json.get("timestamp").asLong()))
        .setTimelineFromSeq(json.hasNonNull("timelineFromSeq") ? json.get("timelineFromSeq").asLong() : null)
        .setReadDiffusion(json.hasNonNull("readDiffusion") ? json.get("readDiffusion").asBoolean() : null)
        .setClientMsgId(text(json, "clientMsgId"))
        .setRejectedOp(text(json, "rejectedOp"))
        .setTargetUserId(text(json, "targetUserId"))
        .setReasonCode(text(json, "reasonCode"))
        .setReason(text(json, "reason"))
        .setRecalledBy(text(json, "recalledBy"))
        .build();
  }

  /**
   * A merged sync page: {@code {"userId", "entries", "next", "hasMore", "cursor"}}. Every entry has
   * {@code "source"}: {@code "inbox"} (its {@code seq} is an inbox seq) or {@code "#groupId"} (its {@code seq} is
   * a seq of that group's timeline); {@code next} is the inbox seq, {@code cursor} the whole vector.
   */
  public static Map<String, Object> syncPage(String userId, MergedSync.SyncPage page) {
    List<Object> entries = new ArrayList<>(page.entries().size());
    for (MergedSync.Entry e : page.entries()) {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("source", e.groupId() == null ? "inbox" : Ids.groupTimeline(e.groupId()));
      json.putAll(inboxEntry(e.seq(), e.value()));
      entries.add(json);
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("userId", userId);
    json.put("entries", entries);
    json.put("next", page.next());
    json.put("hasMore", page.hasMore());
    json.put("cursor", page.cursor().encode());
    List<Object> groups = new ArrayList<>(page.groups().size());
    for (MergedSync.Group g : page.groups()) {
      Map<String, Object> group = new LinkedHashMap<>();
      group.put("groupId", g.groupId());
      group.put("ranges", g.intervals().ranges());
      group.put("through", g.intervals().through());
      groups.add(group);
    }
    json.put("largeGroups", groups);
    return json;
  }

  private static String text(JsonNode json, String field) {
    return json.hasNonNull(field) ? json.get(field).asText() : null;
  }

  /** One message of a conversation timeline; {@code timestamp} is the message's {@code sentAt}. */
  public static Map<String, Object> message(long seq, ChatMessage message) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("seq", seq);
    json.put("type", message.getType().name());
    json.put("conversationId", message.getConversationId());
    json.put("conversationType", message.getConversationType().name());
    json.put("messageId", message.getMessageId());
    json.put("clientMsgId", message.getClientMsgId());
    json.put("senderId", message.getSenderId());
    json.put("senderDeviceId", message.getSenderDeviceId());
    json.put("recipientId", message.getRecipientId());
    json.put("groupId", message.getGroupId());
    json.put("body", message.getBody());
    json.put("refMessageId", message.getRefMessageId());
    json.put("readUpToSeq", message.getReadUpToSeq());
    json.put("timestamp", message.getSentAt().toEpochMilli());
    json.put("attributes", new TreeMap<>(message.getAttributes()));
    return json;
  }

  /** {@code {"userId", "deviceId", "seq"}}: a device's committed cursor, -1 when none. */
  public static Map<String, Object> cursor(String userId, String deviceId, long seq) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("userId", userId);
    json.put("deviceId", deviceId);
    json.put("seq", seq);
    return json;
  }

  private static Map<String, Object> envelope(String idField, String id, List<Object> entries, Page<?> page) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put(idField, id);
    json.put("entries", entries);
    json.put("next", page.next());
    json.put("hasMore", page.hasMore());
    return json;
  }

  private static void putIfSet(Map<String, Object> json, String field, String value) {
    if (value != null) {
      json.put(field, value);
    }
  }
}
