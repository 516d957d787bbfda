package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class PrevPositionTest {

  @Test
  void theHeadersRoundTripAsDecimalText() {
    RecordHeaders headers = new RecordHeaders();
    headers.add("im.trace", new byte[] {7});

    new PrevPosition(0, 1234L).writeTo(headers);

    assertThat(PrevPosition.readFrom(headers)).contains(new PrevPosition(0, 1234L));
    assertThat(new String(headers.lastHeader(PrevPosition.PREV_SEQ).value(), StandardCharsets.UTF_8))
        .isEqualTo("1234");
    assertThat(headers.lastHeader("im.trace").value()).containsExactly(7);
  }

  @Test
  void aSecondCopyKeepsOnlyTheNewestPair() {
    // Given an entry copied from generation 0 to 1; When it is copied again from 1 to 2
    RecordHeaders headers = new RecordHeaders();
    new PrevPosition(0, 10L).writeTo(headers);
    new PrevPosition(1, 4L).writeTo(headers);

    // Then it names generation 1 only
    assertThat(PrevPosition.readFrom(headers)).contains(new PrevPosition(1, 4L));
    assertThat(headers.headers(PrevPosition.PREV_SEQ)).hasSize(1);
  }

  @Test
  void anEntryWrittenInItsGenerationHasNone() {
    assertThat(PrevPosition.readFrom(new RecordHeaders())).isEqualTo(Optional.empty());
    RecordHeaders garbled = new RecordHeaders();
    garbled.add(PrevPosition.PREV_GENERATION, "x".getBytes(StandardCharsets.UTF_8));
    garbled.add(PrevPosition.PREV_SEQ, "1".getBytes(StandardCharsets.UTF_8));
    assertThat(PrevPosition.readFrom(garbled)).isEmpty();
  }
}
