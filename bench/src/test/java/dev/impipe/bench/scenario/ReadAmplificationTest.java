package dev.impipe.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ReadAmplificationTest {

  @Test
  void threeOwnedReadersThatSplitTheInboxReadItOnce() {
    // Given three gateways' reader bytes and the bytes written, before and after
    ReadAmplification.Sample start = new ReadAmplification.Sample(List.of(100.0, 200.0, 300.0), 1_000);
    ReadAmplification.Sample end = new ReadAmplification.Sample(List.of(1_100.0, 1_200.0, 1_300.0), 4_000);

    // When the interval is measured
    ReadAmplification a = ReadAmplification.between(start, end);

    // Then the readers together read what was written in it, once
    assertThat(a.readerBytes()).isEqualTo(3_000);
    assertThat(a.writtenBytes()).isEqualTo(3_000);
    assertThat(a.ratio()).isEqualTo(1.0);
  }

  @Test
  void readersOfEveryPartitionReadTheInboxOncePerInstance() {
    // Given three gateways that each read all 3,000 bytes written
    ReadAmplification.Sample start = new ReadAmplification.Sample(List.of(0.0, 0.0, 0.0), 0);
    ReadAmplification.Sample end = new ReadAmplification.Sample(List.of(3_000.0, 3_000.0, 3_000.0), 3_000);

    // Then the amplification is the instance count
    assertThat(ReadAmplification.between(start, end).ratio()).isEqualTo(3.0);
  }

  @Test
  void nothingWrittenIsNotANumberAndSamplesMustCoverTheSameInstances() {
    ReadAmplification.Sample start = new ReadAmplification.Sample(List.of(5.0), 10);
    assertThat(ReadAmplification.between(start, start).ratio()).isNaN();
    assertThatThrownBy(() -> ReadAmplification.between(start,
        new ReadAmplification.Sample(List.of(5.0, 6.0), 20))).hasMessageContaining("1 and 2 instances");
  }
}
