package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.TestData;
import dev.impipe.inbox.internal.ReadIntervals;
import dev.impipe.inbox.query.MergedSync;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.runtime.http.Json;
import java.time.Instant;
import java.util.List;
import java.util.Map;
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

  @Test
  void aSyncPageNamesTheSourceOfEachEntryAndTheUsersLargeGroups() throws Exception {
    // Given a merged page with an inbox entry and an entry of large group g, which bob reads from conversation
    // seq 5 since his inbox seq 3
    InboxEntry mine = TestData.message("bob", "d:alice:bob", "hi", Instant.ofEpochMilli(1_000));
    InboxEntry group = TestData.message("#g", "g", "all", Instant.ofEpochMilli(2_000));
    ReadIntervals intervals = ReadIntervals.NONE.apply(5, true, 3, 0);
    MergedSync.SyncPage page = new MergedSync.SyncPage(List.of(new MergedSync.Entry(null, 7, mine),
        new MergedSync.Entry("g", 11, group)), 7, false, SyncCursor.of(7, Map.of("g", 11L)),
        List.of(new MergedSync.Group("g", intervals, -1)));

    // When rendered
    JsonNode json = Json.MAPPER.readTree(Json.MAPPER.writeValueAsBytes(JsonViews.syncPage("bob", page)));

    // Then each entry says where it comes from, and largeGroups lists g's ranges and the inbox seq they reflect
    assertThat(json.fieldNames()).toIterable().containsExactly("userId", "entries", "next", "hasMore", "cursor",
        "largeGroups");
    assertThat(json.get("entries").get(0).get("source").asText()).isEqualTo("inbox");
    assertThat(json.get("entries").get(1).get("source").asText()).isEqualTo("#g");
    assertThat(json.get("entries").get(1).get("seq").asLong()).isEqualTo(11);
    assertThat(SyncCursor.decode(json.get("cursor").asText())).isEqualTo(SyncCursor.of(7, Map.of("g", 11L)));
    JsonNode g = json.get("largeGroups").get(0);
    assertThat(g.get("groupId").asText()).isEqualTo("g");
    assertThat(g.get("ranges").asText()).isEqualTo("5-");
    assertThat(g.get("through").asLong()).isEqualTo(3);
  }
}
