package dev.impipe.edge.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ErrorBodiesTest {

  @Test
  void aClientErrorKeepsItsMessage() {
    assertThat(ErrorBodies.publicMessage(400, "seq: must be a number")).isEqualTo("seq: must be a number");
    assertThat(ErrorBodies.redacted(400, "seq: must be a number")).isFalse();
  }

  @Test
  void aServerErrorAnswersOnlyTheLeadOfItsMessage() {
    String internal = "not available, retry: store inbox-entries of partition 19 has applied im.inbox up to offset 3";
    assertThat(ErrorBodies.publicMessage(503, internal)).isEqualTo("not available, retry");
    assertThat(ErrorBodies.redacted(503, internal)).isTrue();
    assertThat(ErrorBodies.publicMessage(503, "not published within 1000 ms"))
        .isEqualTo("not published within 1000 ms");
    assertThat(ErrorBodies.redacted(503, "not published within 1000 ms")).isFalse();
  }

  @Test
  void exceptionTextLongLeadsAndEmptyMessagesBecomeGeneric() {
    assertThat(ErrorBodies.publicMessage(503, "org.apache.kafka.common.errors.TimeoutException"))
        .isEqualTo("temporarily unavailable, retry");
    assertThat(ErrorBodies.publicMessage(500, "x".repeat(121))).isEqualTo("internal error");
    assertThat(ErrorBodies.publicMessage(504, null)).isEqualTo("timed out, retry");
    assertThat(ErrorBodies.publicMessage(503, ": detail only")).isEqualTo("temporarily unavailable, retry");
  }
}
