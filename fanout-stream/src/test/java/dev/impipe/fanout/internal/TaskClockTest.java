package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The task's logical clock and the join boundary, over an in-memory store. */
class TaskClockTest {

  private final KeyValueStore<String, Long> store = Stores.keyValueStoreBuilder(
      Stores.inMemoryKeyValueStore("clock"), Serdes.String(), Serdes.Long()).withLoggingDisabled().build();

  TaskClockTest() {
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
  }

  @AfterEach
  void tearDown() {
    store.close();
  }

  private static GroupState lastSeq(long seq) {
    return new GroupState(2, false, seq, null);
  }

  @Test
  void ticksStartAtOneAndGoOnWhereTheStoreLeftThem() {
    TaskClock clock = new TaskClock(store);
    assertThat(clock.tick()).isEqualTo(1);
    assertThat(clock.tick()).isEqualTo(2);

    // A restart of the task reads the same store
    assertThat(new TaskClock(store).tick()).isEqualTo(3);
  }

  @Test
  void withNothingProcessedAJoinAppliesFromTheSeqAfterTheGroupsLast() {
    TaskClock clock = new TaskClock(store);

    assertThat(clock.joinBoundary(GroupState.EMPTY)).isZero();
    assertThat(clock.joinBoundary(lastSeq(41))).isEqualTo(42);
  }

  @Test
  void aJoinAppliesAfterTheHighestOffsetProcessedEvenIfOffsetsArriveOutOfOrder() {
    TaskClock clock = new TaskClock(store);

    // Offset 0 is a record like any other
    clock.processed(0);
    assertThat(clock.joinBoundary(GroupState.EMPTY)).isEqualTo(1);

    clock.processed(7);
    clock.processed(5);
    // No offset (a punctuation, a record without one) changes nothing
    clock.processed(-1);

    assertThat(clock.joinBoundary(GroupState.EMPTY)).isEqualTo(8);
    // The group's own last seq counts when it is higher
    assertThat(clock.joinBoundary(lastSeq(9))).isEqualTo(10);
  }

  @Test
  void theFloorOfEarlierBuildsIsRaisedNeverLoweredAndCounts() {
    TaskClock clock = new TaskClock(store);

    clock.floor(0);
    assertThat(clock.joinBoundary(GroupState.EMPTY)).isEqualTo(1);

    clock.floor(12);
    clock.floor(3);
    clock.floor(-1);
    clock.processed(4);

    assertThat(clock.joinBoundary(GroupState.EMPTY)).isEqualTo(13);
    assertThat(clock.joinBoundary(lastSeq(20))).isEqualTo(21);
  }
}
