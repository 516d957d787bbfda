package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** {@code groupMinSeq=g:offset,...} on the sync: what the push gateway asks a group timeline to have applied. */
class GroupMinSeqParameterTest {

  @Test
  void groupsAndOffsetsAreReadInOrder() {
    assertThat(SyncRoute.groupMinSeqs(sync(Map.of("groupMinSeq", "big:12,team.a@x:0"))))
        .containsExactly(Map.entry("big", 12L), Map.entry("team.a@x", 0L));
    assertThat(SyncRoute.groupMinSeqs(sync(Map.of()))).isEmpty();
    assertThat(SyncRoute.groupMinSeqs(sync(Map.of("groupMinSeq", "")))).isEmpty();
  }

  @Test
  void anythingElseIsABadRequest() {
    for (String bad : new String[] {"big", "big:", ":3", "big:-1", "big:x", "b g:3", "big:3,"}) {
      assertThatThrownBy(() -> SyncRoute.groupMinSeqs(sync(Map.of("groupMinSeq", bad))))
          .as(bad).isInstanceOf(HttpError.class)
          .satisfies(e -> assertThat(((HttpError) e).status()).isEqualTo(400))
          .hasMessageContaining("groupMinSeq");
    }
  }

  private static Request sync(Map<String, String> query) {
    String path = "/v1/users/bo/devices/phone/sync";
    return new Request("GET", path, Map.of("userId", "bo", "deviceId", "phone"), query, Map.of(), new byte[0], path,
        null, OptionalLong.empty());
  }
}
