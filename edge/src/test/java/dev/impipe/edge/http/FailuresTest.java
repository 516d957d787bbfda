package dev.impipe.edge.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class FailuresTest {

  private static String body(Response r) {
    return new String(r.body(), StandardCharsets.UTF_8);
  }

  @Test
  void anHttpErrorIsAnsweredWithItsStatusMessageAndHeadersEvenWhenWrapped() {
    // Given a 429 thrown inside a completion stage (wrapped twice)
    HttpError error = new HttpError(429, "slow down", Map.of("Retry-After", "3"));
    Response r = Failures.toResponse("POST", "/v1/messages",
        new CompletionException(new ExecutionException(error)));
    // Then the client sees it as thrown
    assertThat(r.status()).isEqualTo(429);
    assertThat(body(r)).isEqualTo("{\"error\":\"slow down\"}");
    assertThat(r.headers()).containsEntry("Retry-After", "3").doesNotContainKey("X-Correlation-Id");
  }

  @Test
  void a5xxWithInternalDetailAnswersItsLeadAndACorrelationId() {
    Response r = Failures.toResponse("GET", "/v1/x",
        HttpError.unavailable("not available, retry: store inbox of partition 3 at offset 17", 1));
    assertThat(r.status()).isEqualTo(503);
    assertThat(body(r)).contains("\"error\":\"not available, retry\"").doesNotContain("partition");
    String id = r.headers().get("X-Correlation-Id");
    assertThat(id).isNotBlank();
    assertThat(body(r)).contains("\"correlationId\":\"" + id + "\"");
    assertThat(r.headers()).containsEntry("Retry-After", "1");
  }

  @Test
  void anyOtherFailureIs500WithOnlyACorrelationId() {
    Response r = Failures.toResponse("GET", "/v1/x", new IllegalStateException("offset 42 of topic secret"));
    assertThat(r.status()).isEqualTo(500);
    assertThat(body(r)).contains("\"error\":\"internal error\"").doesNotContain("secret");
    assertThat(r.headers().get("X-Correlation-Id")).isNotBlank();
  }

  @Test
  void aFullQueueIs503WithRetryAfter() {
    Response r = Failures.toResponse("GET", "/v1/x", Failures.busy());
    assertThat(r.status()).isEqualTo(503);
    assertThat(body(r)).isEqualTo("{\"error\":\"server busy, retry\"}");
    assertThat(r.headers()).containsEntry("Retry-After", "1");
  }

  @Test
  void anErrorWithoutAMessageStillHasAnErrorField() {
    assertThat(body(Failures.error(400, null))).isEqualTo("{\"error\":\"error\"}");
  }
}
