package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.OptionalLong;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class CopyProgressTest {

  @Test
  void aFreshCopyStartsAtTheOldestRetainedRecord() {
    CopyProgress.Partition p = new CopyProgress.Partition(100, OptionalLong.empty(), 400);
    assertThat(p.resumeAt()).isEqualTo(100);
    assertThat(p.remaining()).isEqualTo(300);
    assertThat(p.done()).isFalse();
  }

  @Test
  void aRestartResumesAfterTheLastCommittedBatch() {
    assertThat(new CopyProgress.Partition(100, OptionalLong.of(250), 400).resumeAt()).isEqualTo(250);
  }

  @Test
  void retentionPastTheCommittedOffsetResumesAtTheLogStart() {
    assertThat(new CopyProgress.Partition(300, OptionalLong.of(250), 400).resumeAt()).isEqualTo(300);
  }

  @Test
  void progressSumsThePartitionsAndIsDoneWhenEveryOneIs() {
    TopicPartition p0 = new TopicPartition("im.inbox", 0);
    TopicPartition p1 = new TopicPartition("im.inbox", 1);
    CopyProgress half = new CopyProgress(Map.of(
        p0, new CopyProgress.Partition(0, OptionalLong.of(100), 100),
        p1, new CopyProgress.Partition(0, OptionalLong.empty(), 100)));
    assertThat(half.done()).isFalse();
    assertThat(half.describe()).isEqualTo("100/200 offsets (50%)");

    CopyProgress done = new CopyProgress(Map.of(
        p0, new CopyProgress.Partition(0, OptionalLong.of(100), 100),
        p1, new CopyProgress.Partition(0, OptionalLong.of(100), 100)));
    assertThat(done.done()).isTrue();
    assertThat(new CopyProgress(Map.of(p0, new CopyProgress.Partition(0, OptionalLong.empty(), 0))).describe())
        .isEqualTo("0/0 offsets (100%)");
  }

  @Test
  void progressCountsOnlyWhatRetentionKeptAndListsThePartitionsInOrder() {
    TopicPartition p0 = new TopicPartition("im.inbox", 0);
    TopicPartition p10 = new TopicPartition("im.inbox", 10);
    TopicPartition p2 = new TopicPartition("im.inbox", 2);
    CopyProgress progress = new CopyProgress(Map.of(
        p10, new CopyProgress.Partition(300, OptionalLong.of(350), 400),
        p2, new CopyProgress.Partition(100, OptionalLong.empty(), 200),
        p0, new CopyProgress.Partition(50, OptionalLong.of(90), 100)));

    // copied: 50 of p10's 100 retained, none of p2's 100, 40 of p0's 50
    assertThat(progress.copied()).isEqualTo(90);
    assertThat(progress.total()).isEqualTo(250);
    assertThat(progress.describe()).isEqualTo("90/250 offsets (36%)");
    assertThat(progress.partitions().keySet()).containsExactly(p0, p2, p10);
  }
}
