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

  @Test
  void dueListsThePartitionsWhoseCommittableOffsetMovedSinceTheLastCommit() {
    org.apache.kafka.common.TopicPartition p0 = new org.apache.kafka.common.TopicPartition("t", 0);
    org.apache.kafka.common.TopicPartition p1 = new org.apache.kafka.common.TopicPartition("t", 1);
    org.apache.kafka.common.TopicPartition p2 = new org.apache.kafka.common.TopicPartition("t", 2);
    PartitionOffsets o0 = new PartitionOffsets();
    o0.started(3);
    o0.finished(3);
    PartitionOffsets o1 = new PartitionOffsets();
    o1.started(7);
    PartitionOffsets o2 = new PartitionOffsets();
    java.util.Map<org.apache.kafka.common.TopicPartition, PartitionOffsets> all = java.util.Map.of(p0, o0, p1, o1, p2,
        o2);
    // p0 moved to 4, p1 is still at 7 as committed, p2 has seen nothing
    assertThat(PartitionOffsets.due(all, all.keySet(), java.util.Map.of(p1, 7L)))
        .isEqualTo(java.util.Map.of(p0, new org.apache.kafka.clients.consumer.OffsetAndMetadata(4)));
    assertThat(PartitionOffsets.due(all, java.util.List.of(p1), java.util.Map.of())).containsOnlyKeys(p1);
    assertThat(PartitionOffsets.due(all, java.util.List.of(new org.apache.kafka.common.TopicPartition("t", 9)),
        java.util.Map.of())).isEmpty();
  }
}
