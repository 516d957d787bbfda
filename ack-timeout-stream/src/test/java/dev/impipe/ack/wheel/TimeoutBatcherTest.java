package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.wheel.DeviceTimers.Run;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One AckTimeout per device, attempt count and finality, with sorted seqs and the earliest times. */
class TimeoutBatcherTest {

  @Test
  void seqsOfOneDeviceAndAttemptGoInOneRecordSortedWithTheEarliestPushAndDeadline() {
    TimeoutBatcher batcher = new TimeoutBatcher();
    batcher.add("alice", "phone", new Run(7, 7, 1, 300, 900, 900, 1), false);
    batcher.add("alice", "phone", new Run(5, 5, 1, 200, 950, 950, 1), false);
    batcher.add("alice", "tablet", new Run(5, 5, 1, 100, 800, 800, 1), false);
    batcher.add("alice", "phone", new Run(6, 6, 1, 100, 700, 700, 3), true);

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
  void aRunListsEachOfItsSeqs() {
    TimeoutBatcher batcher = new TimeoutBatcher();
    batcher.add("alice", "phone", new Run(10, 12, 1, 100, 700, 750, 1), true);
    batcher.add("alice", "phone", new Run(Long.MAX_VALUE, Long.MAX_VALUE, 1, 90, 800, 800, 1), true);

    assertThat(batcher.timeouts()).singleElement().satisfies(t -> {
      assertThat(t.value().getSeqs()).containsExactly(10L, 11L, 12L, Long.MAX_VALUE);
      assertThat(t.value().getFirstPushedAt()).isEqualTo(Instant.ofEpochMilli(90));
      assertThat(t.value().getDeadline()).isEqualTo(Instant.ofEpochMilli(700));
    });
  }

  @Test
  void aRoundWithNothingDueEmitsNothing() {
    assertThat(new TimeoutBatcher().timeouts()).isEmpty();
  }
}
