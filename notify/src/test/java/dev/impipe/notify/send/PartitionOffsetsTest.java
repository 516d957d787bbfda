package dev.impipe.notify.send;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class PartitionOffsetsTest {

  @Test
  void nothingToCommitBeforeTheFirstRecord() {
    assertThat(new PartitionOffsets().committable()).isEmpty();
  }

  @Test
  void theCommitStopsAtTheLowestUnfinishedOffset() {
    // Given records 10, 11, 12 (13 is a transaction marker) and 14 started
    PartitionOffsets o = new PartitionOffsets();
    o.started(10);
    o.started(11);
    o.started(12);
    o.started(14);
    assertThat(o.committable()).isEqualTo(OptionalLong.of(10));
    assertThat(o.unfinished()).isEqualTo(4);

    // When 11 and 14 finish first (out of order), Then nothing moves: 10 is still being sent
    o.finished(11);
    o.finished(14);
    assertThat(o.committable()).isEqualTo(OptionalLong.of(10));

    // When 10 finishes, Then up to 12 (the one still in flight)
    o.finished(10);
    assertThat(o.committable()).isEqualTo(OptionalLong.of(12));

    // When 12 finishes, Then one past the highest seen
    o.finished(12);
    assertThat(o.committable()).isEqualTo(OptionalLong.of(15));
    assertThat(o.unfinished()).isZero();
  }

  @Test
  void finishingAnUnknownOffsetChangesNothing() {
    PartitionOffsets o = new PartitionOffsets();
    o.started(5);
    o.finished(4);
    assertThat(o.committable()).isEqualTo(OptionalLong.of(5));
  }
}
