package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.TestData;
import dev.impipe.inbox.http.JsonViews;
import dev.impipe.edge.http.Json;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The byte size of an entry in a JSON answer, computed without writing it, against what the writer writes. */
class JsonSizeTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  @Test
  void aStringCostsExactlyWhatTheJsonWriterWrites() throws Exception {
    // Given strings of plain, escaped, control, non-ASCII and astral characters
    List<String> texts = List.of("", "hello", "quote\" and \\ backslash", "line\nfeed\ttab\r\b\f",
        "\u0000\u0001\u001f control", "caf\u00e9 \u00fc\u00df", "\u4e2d\u6587", "emoji \ud83d\ude00!",
        "\u0001".repeat(10_000));
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
}
