package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.TestData;
import dev.impipe.inbox.query.Page;
import dev.impipe.runtime.http.Json;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonViewsTest {

  @Test
  void anInboxPageHasTheContractShape() throws Exception {
    // Given a page with one message entry at seq 42
    InboxEntry entry = TestData.message("bob", "d:alice:bob", "hi", Instant.ofEpochMilli(1_700_000_000_123L));
    Page<InboxEntry> page = new Page<>(List.of(new Page.Entry<>(42, entry)), 42L, true);

    // When rendered
    JsonNode json = Json.MAPPER.readTree(Json.MAPPER.writeValueAsBytes(JsonViews.inboxPage("bob", page)));

    // Then it is {"userId", "entries": [{"seq", "type", "conversationId", "messageId", "senderId", "body",
    // "timestamp", ...}], "next", "hasMore"} with times in epoch millis
    assertThat(json.fieldNames()).toIterable().containsExactly("userId", "entries", "next", "hasMore");
    assertThat(json.get("userId").asText()).isEqualTo("bob");
    assertThat(json.get("next").asLong()).isEqualTo(42);
    assertThat(json.get("hasMore").asBoolean()).isTrue();
    JsonNode e = json.get("entries").get(0);
    assertThat(e.fieldNames()).toIterable().contains("seq", "type", "conversationId", "messageId", "senderId",
        "body", "timestamp");
    assertThat(e.get("seq").asLong()).isEqualTo(42);
    assertThat(e.get("type").asText()).isEqualTo("MESSAGE");
    assertThat(e.get("conversationId").asText()).isEqualTo("d:alice:bob");
    assertThat(e.get("messageId").asText()).isEqualTo("m-hi");
    assertThat(e.get("body").asText()).isEqualTo("hi");
    assertThat(e.get("timestamp").asLong()).isEqualTo(1_700_000_000_123L);
    assertThat(e.get("readUpToSeq").isNull()).isTrue();
  }
}
