package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.TestData;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.inbox.query.MergedSync;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.edge.http.Json;
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
    JsonNode json = Json.MAPPER.readTree(JsonViews.inboxPage("bob", page));

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
  void aSyncPageStreamsTheSameEntryFieldsAsTheMapViewPlusItsSource() throws Exception {
    // Given a merged page: one inbox entry, one entry of the large group #g with a timelineFromSeq and a REJECTED
    // entry with its reason fields
    InboxEntry message =
        TestData.message("bob", "d:alice:bob", "hi \"there\"", Instant.ofEpochMilli(1_700_000_000_123L));
    InboxEntry fromGroup = InboxEntry.newBuilder(message).setConversationId("g:g").setTimelineFromSeq(7L)
        .setReadDiffusion(true).build();
    InboxEntry rejected = InboxEntry.newBuilder(message).setType(dev.impipe.avro.InboxEntryType.REJECTED)
        .setBody(null).setClientMsgId("c-1").setReasonCode("NOT_MEMBER").setReason("not a member").build();
    MergedSync.SyncPage page = new MergedSync.SyncPage(List.of(new MergedSync.Entry(null, 3, message),
        new MergedSync.Entry("g", 9, fromGroup), new MergedSync.Entry(null, 4, rejected)), 4L, false,
        SyncCursor.of(4, java.util.Map.of("g", 9L)), List.of());

    // When rendered
    JsonNode json = Json.MAPPER.readTree(JsonViews.syncPage("bob", page));

    // Then the envelope has the contract's fields, and each entry is "source" followed by exactly the fields of the
    // map view of that entry, in the same order, with the same values
    assertThat(json.fieldNames()).toIterable().containsExactly("userId", "entries", "next", "hasMore", "cursor",
        "largeGroups");
    assertThat(json.get("cursor").asText()).isEqualTo(page.cursor().encode());
    assertThat(json.get("hasMore").asBoolean()).isFalse();
    List<String> sources = List.of("inbox", "#g", "inbox");
    for (int i = 0; i < 3; i++) {
      MergedSync.Entry e = page.entries().get(i);
      java.util.Map<String, Object> expected = new java.util.LinkedHashMap<>();
      expected.put("source", sources.get(i));
      expected.putAll(JsonViews.inboxEntry(e.seq(), e.value()));
      assertThat(json.get("entries").get(i)).isEqualTo(Json.MAPPER.readTree(Json.MAPPER.writeValueAsBytes(expected)));
      assertThat(json.get("entries").get(i).fieldNames()).toIterable()
          .containsExactlyElementsOf(expected.keySet());
    }
    assertThat(json.get("entries").get(2).get("reason").asText()).isEqualTo("not a member");
    assertThat(json.get("entries").get(0).get("body").asText()).isEqualTo("hi \"there\"");
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
    JsonNode json = Json.MAPPER.readTree(JsonViews.syncPage("bob", page));

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
