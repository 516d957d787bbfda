package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Response;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OwnerRouterTest {

  @Test
  void aForwarded200WithoutABodyIsNotPassedOnButEverythingElseIs() {
    assertThat(OwnerRouter.isAnswer(200, 0)).isFalse();
    assertThat(OwnerRouter.isAnswer(200, 1)).isTrue();
    // the owner's refusals and its own 503 keep their status and reason, whatever their body
    assertThat(OwnerRouter.isAnswer(403, 0)).isTrue();
    assertThat(OwnerRouter.isAnswer(503, 0)).isTrue();
    assertThat(OwnerRouter.isAnswer(202, 0)).isTrue();
  }

  @Test
  void a503SaysOnlyNotReadyRetry() {
    // no store name, partition, offset or host: those are logged
    assertThat(OwnerRouter.unavailable().getMessage()).isEqualTo("not ready, retry");
    assertThat(OwnerRouter.unavailable().status()).isEqualTo(503);
    assertThat(OwnerRouter.unavailable().headers()).containsEntry("Retry-After", "1");
  }

  @Test
  void aTimelineAnswerOf429PassesOnAnythingElseButA200IsAGeneric503() {
    Response tooMany = Response
        .json(429, Map.of("error", "you have 4 requests waiting already")).withHeader("Retry-After", "1");
    assertThatThrownBy(() -> RoutedGroupTimelines.page("g", tooMany))
        .isInstanceOfSatisfying(HttpError.class, e -> {
          assertThat(e.status()).isEqualTo(429);
          assertThat(e.headers()).containsEntry("Retry-After", "1");
        }).hasMessageContaining("waiting already");
    Response behind = Response
        .json(503, Map.of("error", "not ready, retry"));
    assertThatThrownBy(() -> RoutedGroupTimelines.page("g", behind))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(503))
        .hasMessage("not ready, retry");
  }
}
