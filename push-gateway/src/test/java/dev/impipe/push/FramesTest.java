package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.http.Json;
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
}
