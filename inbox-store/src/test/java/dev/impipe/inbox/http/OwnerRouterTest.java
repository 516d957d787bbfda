package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

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
}
