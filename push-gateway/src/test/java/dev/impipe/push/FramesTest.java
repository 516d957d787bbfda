package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.edge.http.Json;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The frames of the device protocol and the paths the gateway reads through. */
class FramesTest {

  @Test
  void entryAndControlFrames() throws Exception {
    assertThat(Frames.entry(Json.MAPPER.readTree("{\"seq\":3}"), "c3"))
        .isEqualTo("{\"type\":\"entry\",\"entry\":{\"seq\":3},\"cursor\":\"c3\"}");
    assertThat(Frames.inboxEntry(Json.MAPPER.readTree("{\"seq\":3}")).toString())
        .isEqualTo("{\"source\":\"inbox\",\"seq\":3}");
    assertThat(Frames.error("m1", 429, "slow down"))
        .isEqualTo("{\"type\":\"error\",\"clientMsgId\":\"m1\",\"status\":429,\"error\":\"slow down\"}");
    assertThat(Frames.error(null, 0, "bad")).isEqualTo("{\"type\":\"error\",\"error\":\"bad\"}");
    assertThat(Frames.resync("behind", null)).isEqualTo("{\"type\":\"resync\",\"reason\":\"behind\"}");
    assertThat(Frames.resync("behind", "c9"))
        .isEqualTo("{\"type\":\"resync\",\"reason\":\"behind\",\"cursor\":\"c9\"}");
    assertThat(Frames.synced("c1")).isEqualTo("{\"type\":\"synced\",\"cursor\":\"c1\"}");
  }

  @Test
  void aRedirectNamesTheOwnersSocketForTheSameDeviceAndNoToken() {
    // The owner's /v1/ws for the same device (escaped); the client adds its own token there
    assertThat(Frames.redirectUrl("10.0.0.2:8080", "/v1/ws", "my phone"))
        .isEqualTo("http://10.0.0.2:8080/v1/ws?device=my+phone");
    // No owner known yet: no url, the device reconnects where it first connected
    assertThat(Frames.redirectUrl("", "/v1/ws", "phone")).isNull();
    assertThat(Frames.redirect("http://h:1/v1/ws?device=p", "moved"))
        .isEqualTo("{\"type\":\"redirect\",\"url\":\"http://h:1/v1/ws?device=p\",\"reason\":\"moved\"}");
    assertThat(Frames.redirect(null, "moving")).isEqualTo("{\"type\":\"redirect\",\"reason\":\"moving\"}");
  }

  @Test
  void theFirstSyncPageAsksOnlyForTheLimit() {
    assertThat(Frames.syncPath("ann b", "phone", 16, null, -1, Map.of()))
        .isEqualTo("/v1/users/ann+b/devices/phone/sync?limit=16");
  }

  @Test
  void aLaterPageAsksAfterTheVectorAndWaitsForWhatTheReaderPassed() {
    Map<String, Long> groups = new LinkedHashMap<>();
    groups.put("g1", 7L);
    groups.put("g2", -1L); // nothing passed yet: no wait
    groups.put("g3", 12L);
    assertThat(Frames.syncPath("ann", "phone", 3, "CUR", 41, groups))
        .isEqualTo("/v1/users/ann/devices/phone/sync?limit=3&after=CUR&minSeq=41&groupMinSeq=g1%3A7%2Cg3%3A12");
  }

  @Test
  void aRedeliveryReadsFromItsFirstSeq() {
    assertThat(Frames.inboxPath("ann", 5, 3)).isEqualTo("/v1/users/ann/inbox?after=4&limit=3");
  }

  @Test
  void anAckNamesASeqOrACursorThisGatewaySent() throws Exception {
    String cursor = SyncCursor.of(9, Map.of("g1", 2L)).encode();
    assertThat(Frames.ackCursor(Json.MAPPER.readTree("{\"type\":\"ack\",\"cursor\":\"" + cursor + "\"}"), 0))
        .isEqualTo(SyncCursor.of(9, Map.of("g1", 2L)));
    assertThat(Frames.ackCursor(Json.MAPPER.readTree("{\"type\":\"ack\",\"seq\":4}"), 0))
        .isEqualTo(SyncCursor.of(4, Map.of()));
    assertThatThrownBy(() -> Frames.ackCursor(Json.MAPPER.readTree("{\"type\":\"ack\",\"cursor\":\"x\"}"), 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("not a cursor this gateway sent");
    for (String bad : new String[] {"{}", "{\"seq\":\"4\"}", "{\"seq\":4.5}", "{\"seq\":null}"}) {
      assertThatThrownBy(() -> Frames.ackCursor(Json.MAPPER.readTree(bad), 0)).as(bad)
          .isInstanceOf(IllegalArgumentException.class).hasMessage("an ack needs \"seq\" or \"cursor\"");
    }
  }

  @Test
  void aBareSeqIsReadInTheConnectionsInboxGenerationAndACursorKeepsItsOwn() throws Exception {
    assertThat(Frames.ackCursor(Json.MAPPER.readTree("{\"type\":\"ack\",\"seq\":4}"), 2))
        .isEqualTo(SyncCursor.of(4, Map.of()).inGeneration(2));
    String v1 = SyncCursor.of(9, Map.of()).encode();
    assertThat(Frames.ackCursor(Json.MAPPER.readTree("{\"type\":\"ack\",\"cursor\":\"" + v1 + "\"}"), 2)
        .generation()).isZero();
  }

  @Test
  void aLiveEntryNamesItsSourceFirst() {
    InboxEntry entry = InboxEntry.newBuilder().setUserId("bo").setType(InboxEntryType.MESSAGE).setConversationId("g1")
        .setConversationSeq(3).setMessageId("m1").setSenderId("ann").setTimestamp(java.time.Instant.ofEpochMilli(1000))
        .build();
    var json = Frames.live("#g1", 42, entry);
    assertThat(json.fieldNames().next()).isEqualTo("source");
    assertThat(json.path("source").asText()).isEqualTo("#g1");
    assertThat(json.path("seq").asLong()).isEqualTo(42);
    assertThat(json.path("messageId").asText()).isEqualTo("m1");
  }
}
