package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.wheel.WheelCodec.Pending;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One AckTimeout per device, attempt count and finality, with sorted seqs and the earliest times. */
class TimeoutBatcherTest {

  @Test
  void seqsOfOneDeviceAndAttemptGoInOneRecordSortedWithTheEarliestPushAndDeadline() {
    TimeoutBatcher batcher = new TimeoutBatcher();
    batcher.add("alice", "phone", 7, new Pending(1, 300, 900, 1), false);
    batcher.add("alice", "phone", 5, new Pending(1, 200, 950, 1), false);
    batcher.add("alice", "tablet", 5, new Pending(1, 100, 800, 1), false);
    batcher.add("alice", "phone", 6, new Pending(1, 100, 700, 3), true);

    List<TimeoutBatcher.Timeout> out = batcher.timeouts();

    assertThat(out).hasSize(3);
    TimeoutBatcher.Timeout first = out.get(0);
    assertThat(first.isFinal()).isFalse();
    assertThat(first.value().getUserId()).isEqualTo("alice");
    assertThat(first.value().getDeviceId()).isEqualTo("phone");
    assertThat(first.value().getSeqs()).containsExactly(5L, 7L);
    assertThat(first.value().getFirstPushedAt()).isEqualTo(Instant.ofEpochMilli(200));
    assertThat(first.value().getDeadline()).isEqualTo(Instant.ofEpochMilli(900));
    assertThat(first.value().getAttempts()).isEqualTo(1);
    assertThat(out.get(1).value().getDeviceId()).isEqualTo("tablet");
    assertThat(out.get(2).isFinal()).isTrue();
    assertThat(out.get(2).value().getAttempts()).isEqualTo(3);
    assertThat(out.get(2).value().getSeqs()).containsExactly(6L);
  }

  @Test
  void aRoundWithNothingDueEmitsNothing() {
    assertThat(new TimeoutBatcher().timeouts()).isEmpty();
  }
}
