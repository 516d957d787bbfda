package dev.impipe.inbox.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.query.MergedSync;
import dev.impipe.runtime.domain.Ids;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import dev.impipe.inbox.query.Page;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The JSON bodies of the sync and history API, fields in a fixed order. The inbox and sync pages (the hot path) are
 * streamed straight into bytes; the rest are plain maps.
 */
public final class JsonViews {

  private static final JsonFactory FACTORY = new JsonFactory();

  private JsonViews() {}

  /** {@code {"userId", "entries": [...], "next", "hasMore"}}, written as it is built (the sync hot path). */
  public static byte[] inboxPage(String userId, Page<InboxEntry> page) {
    return write(out -> {
      out.writeStringField("userId", userId);
      out.writeArrayFieldStart("entries");
      for (Page.Entry<InboxEntry> e : page.entries()) {
        out.writeStartObject();
        entryFields(e.seq(), e.value(), fieldsOf(out));
        out.writeEndObject();
      }
      out.writeEndArray();
      out.writeNumberField("next", page.next());
      out.writeBooleanField("hasMore", page.hasMore());
    });
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
    entryFields(seq, entry, json::put);
    return json;
  }

  /** Where {@link #entryFields} puts an entry's fields: a map, or a streaming generator (the sync pages). */
  @FunctionalInterface
  private interface Fields {
    void put(String field, Object value);
  }

  private static void entryFields(long seq, InboxEntry entry, Fields json) {
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
    // CONVERSATION_SETTINGS: the flags that changed.
    putIfSet(json, "muted", entry.getMuted());
    putIfSet(json, "pinned", entry.getPinned());
    // A recalled MESSAGE: served without its body, marked.
    if (entry.getRecalledBy() != null) {
      json.put("recalled", true);
      json.put("recalledBy", entry.getRecalledBy());
    }
  }

  /** A sink for {@link #entryFields} that writes each field to {@code out}. */
  private static Fields fieldsOf(JsonGenerator out) {
    return (field, value) -> {
      try {
        write(out, field, value);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    };
  }

  /** Writes a field of {@link #entryFields} (its values are strings, numbers, booleans or null). */
  private static void write(JsonGenerator out, String field, Object value) throws IOException {
    if (value == null) {
      out.writeNullField(field);
    } else if (value instanceof String text) {
      out.writeStringField(field, text);
    } else if (value instanceof Long number) {
      out.writeNumberField(field, number);
    } else if (value instanceof Integer number) {
      out.writeNumberField(field, number);
    } else if (value instanceof Boolean flag) {
      out.writeBooleanField(field, flag);
    } else {
      throw new IllegalArgumentException("not a JSON scalar: " + value.getClass());
    }
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
  public static byte[] syncPage(String userId, MergedSync.SyncPage page) {
    return syncPage(userId, page, 0);
  }

  /** The same, its cursor in inbox generation {@code generation} (the one the store serves). */
  public static byte[] syncPage(String userId, MergedSync.SyncPage page, int generation) {
    return write(out -> {
      out.writeStringField("userId", userId);
      out.writeArrayFieldStart("entries");
      for (MergedSync.Entry e : page.entries()) {
        out.writeStartObject();
        out.writeStringField("source", e.groupId() == null ? "inbox" : Ids.groupTimeline(e.groupId()));
        entryFields(e.seq(), e.value(), fieldsOf(out));
        out.writeEndObject();
      }
      out.writeEndArray();
      out.writeNumberField("next", page.next());
      out.writeBooleanField("hasMore", page.hasMore());
      out.writeStringField("cursor", page.cursor().inGeneration(generation).encode());
      out.writeArrayFieldStart("largeGroups");
      for (MergedSync.Group g : page.groups()) {
        out.writeStartObject();
        out.writeStringField("groupId", g.groupId());
        out.writeStringField("ranges", g.intervals().ranges());
        out.writeNumberField("through", g.intervals().through());
        out.writeEndObject();
      }
      out.writeEndArray();
    });
  }

  @FunctionalInterface
  private interface Body {
    void write(JsonGenerator out) throws IOException;
  }

  /** One JSON object, streamed into bytes: no intermediate maps or trees. */
  private static byte[] write(Body body) {
    ByteArrayBuilder bytes = new ByteArrayBuilder(4096);
    try (JsonGenerator out = FACTORY.createGenerator(bytes)) {
      out.writeStartObject();
      body.write(out);
      out.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write JSON into memory", e);
    }
    return bytes.toByteArray();
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

  private static void putIfSet(Fields json, String field, Object value) {
    if (value != null) {
      json.put(field, value);
    }
  }
}
