package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.TestData;
import dev.impipe.inbox.http.JsonViews;
import dev.impipe.edge.http.Json;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/** The byte size of an entry in a JSON answer, computed without writing it, against what the writer writes. */
class JsonSizeTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  @Test
  void aStringCostsExactlyWhatTheJsonWriterWrites() throws Exception {
    // Given strings of plain, escaped, control, non-ASCII and astral characters
    List<String> texts = List.of("", "hello", "quote\" and \\ backslash", "line\nfeed\ttab\r\b\f",
        "\u0000\u0001\u001f control", "caf\u00e9 \u00fc\u00df", "\u4e2d\u6587", "emoji \ud83d\ude00!",
        "\u0001".repeat(10_000), "\u001f", " ", "\u007f", "\u0080", "\u07ff", "\u0800", "\uffff");
    for (String text : texts) {
      // When its size is computed, Then it is the length of the writer's output
      assertThat(JsonSize.string(text)).as(text.length() > 40 ? "long" : text)
          .isEqualTo(Json.MAPPER.writeValueAsBytes(text).length);
    }
    assertThat(JsonSize.string(null)).isEqualTo(4);
  }

  @Test
  void anEntryOrAMessageIsNeverLargerInJsonThanItsSize() throws Exception {
    // Given an inbox entry and a message with fat bodies of control characters (6 bytes each once escaped)
    String fat = "\u0002".repeat(10_000);
    InboxEntry entry = TestData.message("alice", "d:alice:bob", fat, T0);
    ChatMessage message = ChatMessage.newBuilder(TestData.chat("team", "bob", fat, T0))
        .setAttributes(Map.of("k", "v\u0003")).build();

    // Then the written JSON is at most the computed size, and not far below it (the fixed allowance)
    long entryJson = Json.MAPPER.writeValueAsBytes(JsonViews.inboxEntry(9_223_372_036_854_775_000L, entry)).length;
    assertThat(JsonSize.entry(entry)).isBetween(entryJson, entryJson + JsonSize.ENTRY_OVERHEAD);
    long messageJson = Json.MAPPER.writeValueAsBytes(JsonViews.message(42, message)).length;
    assertThat(JsonSize.message(message)).isBetween(messageJson, messageJson + JsonSize.ENTRY_OVERHEAD);
    assertThat(entryJson).isGreaterThan(60_000);
  }

  @Test
  void everyStringFieldOfAnEntryCountsInFull() {
    // Given an entry with only its required strings, and a value that costs 6 bytes a character
    InboxEntry base = InboxEntry.newBuilder().setUserId("alice").setType(InboxEntryType.MESSAGE)
        .setConversationId("c").setConversationSeq(1).setTimestamp(T0).build();
    String fat = "\u0002".repeat(100);
    Map<String, BiFunction<InboxEntry.Builder, String, InboxEntry.Builder>> fields = Map.ofEntries(
        Map.entry("conversationId", InboxEntry.Builder::setConversationId),
        Map.entry("messageId", InboxEntry.Builder::setMessageId),
        Map.entry("senderId", InboxEntry.Builder::setSenderId),
        Map.entry("body", InboxEntry.Builder::setBody),
        Map.entry("refMessageId", InboxEntry.Builder::setRefMessageId),
        Map.entry("clientMsgId", InboxEntry.Builder::setClientMsgId),
        Map.entry("rejectedOp", InboxEntry.Builder::setRejectedOp),
        Map.entry("targetUserId", InboxEntry.Builder::setTargetUserId),
        Map.entry("reasonCode", InboxEntry.Builder::setReasonCode),
        Map.entry("reason", InboxEntry.Builder::setReason),
        Map.entry("recalledBy", InboxEntry.Builder::setRecalledBy));
    fields.forEach((name, setter) -> {
      // When one field holds the value
      InboxEntry with = setter.apply(InboxEntry.newBuilder(base), fat).build();
      // Then the entry costs the value's bytes more than with that field as it was (null: 4 bytes, "c": 3)
      long was = "conversationId".equals(name) ? JsonSize.string("c") : JsonSize.string(null);
      assertThat(JsonSize.entry(with) - JsonSize.entry(base)).as(name).isEqualTo(JsonSize.string(fat) - was);
    });
    assertThat(JsonSize.entry(base)).isEqualTo(JsonSize.ENTRY_OVERHEAD + JsonSize.string("c") + 10 * 4);
  }

  @Test
  void everyStringFieldAndAttributeOfAMessageCountsInFull() {
    // Given a message, and a value that costs 6 bytes a character
    ChatMessage base = TestData.chat("team", "bob", "hi", T0);
    String fat = "\u0002".repeat(100);
    Map<String, BiFunction<ChatMessage.Builder, String, ChatMessage.Builder>> fields = Map.of(
        "conversationId", ChatMessage.Builder::setConversationId,
        "messageId", ChatMessage.Builder::setMessageId,
        "clientMsgId", ChatMessage.Builder::setClientMsgId,
        "senderId", ChatMessage.Builder::setSenderId,
        "senderDeviceId", ChatMessage.Builder::setSenderDeviceId,
        "recipientId", ChatMessage.Builder::setRecipientId,
        "groupId", ChatMessage.Builder::setGroupId,
        "body", ChatMessage.Builder::setBody,
        "refMessageId", ChatMessage.Builder::setRefMessageId);
    fields.forEach((name, setter) -> {
      // When one field holds the value: the message costs the value's bytes more than the field's old value
      ChatMessage with = setter.apply(ChatMessage.newBuilder(base), fat).build();
      Object old = base.get(name);
      long was = JsonSize.string(old == null ? null : old.toString());
      assertThat(JsonSize.message(with) - JsonSize.message(base)).as(name).isEqualTo(JsonSize.string(fat) - was);
    });
    // When it has two attributes: each costs its key, its value and a colon and a comma
    ChatMessage attributed = ChatMessage.newBuilder(base).setAttributes(Map.of("k", "v", "key", fat)).build();
    assertThat(JsonSize.message(attributed) - JsonSize.message(base))
        .isEqualTo(JsonSize.string("k") + JsonSize.string("v") + 2 + JsonSize.string("key") + JsonSize.string(fat)
            + 2);
  }
}
