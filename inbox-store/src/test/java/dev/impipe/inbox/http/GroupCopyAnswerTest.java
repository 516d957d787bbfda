package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.edge.http.HttpError;
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

  private static Response json(int status, String body) {
    return Response.json(status, body.getBytes(StandardCharsets.UTF_8));
  }
}
