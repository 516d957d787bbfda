package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.http.Response;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The answer of a group timeline's owner to a copy sub-read ({@code copyOf}), as the resyncing instance reads it. */
class GroupCopyAnswerTest {

  @Test
  void aSeqIsTheTranslatedPositionAndNullIsNotAppliedYet() {
    assertThat(GenerationResync.copiedSeq("g", Response.json(200, Map.of("seq", 9)))).hasValue(9);
    assertThat(GenerationResync.copiedSeq("g", Response.json(200, Map.of("seq", -1)))).hasValue(-1);
    assertThat(GenerationResync.copiedSeq("g", json(200, "{\"seq\":null}"))).isEmpty();
  }

  @Test
  void aRefusalPassesOnAndAnythingElseIsA503() {
    assertThatThrownBy(() -> GenerationResync.copiedSeq("g", json(429, "{\"error\":\"x\"}")))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(429));
    for (Response r : new Response[] {json(503, "{\"error\":\"not ready, retry\"}"), json(200, "{}"),
        json(200, "{\"seq\":\"x\"}"), json(200, "not json"), json(409, "{\"error\":\"x\"}")}) {
      assertThatThrownBy(() -> GenerationResync.copiedSeq("g", r))
          .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(503));
    }
  }

  @Test
  void aCopySubReadIsForAGroupTimelineOfThePreviousGeneration() {
    GenerationResync resync = new GenerationResync(null, null, null, 1);
    assertThatThrownBy(() -> resync.copyOf(copyRequest("bob", "4", "0"), "bob"))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(400))
        .hasMessage("query parameter 'copyOf' is for group timelines only");
    assertThatThrownBy(() -> resync.copyOf(copyRequest("#g", "4", "1"), "#g"))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(409))
        .hasMessage("this is inbox generation 1: it holds copies of generation 0, not 1");
    assertThatThrownBy(() -> resync.copyOf(copyRequest("#g", "-2", "0"), "#g"))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(400));
  }

  private static Request copyRequest(String owner, String copyOf, String generation) {
    return new Request("GET", "/v1/users/" + owner + "/inbox", Map.of("userId", owner),
        Map.of("copyOf", copyOf, "generation", generation), Map.of(), new byte[0]);
  }

  private static Response json(int status, String body) {
    return Response.json(status, body.getBytes(StandardCharsets.UTF_8));
  }
}
