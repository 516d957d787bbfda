package dev.impipe.edge.app;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.kafka.streams.KafkaStreams.State;
import org.junit.jupiter.api.Test;

class ReadinessTest {

  @Test
  void anAppIsReadyWhenRunningAndStaysReadyThroughALaterRebalance() {
    assertThat(PipelineRuntime.ready(State.RUNNING, true)).isTrue();
    // another instance joining or leaving the group: still serving, keys on the move answer 503 themselves
    assertThat(PipelineRuntime.ready(State.REBALANCING, true)).isTrue();
  }

  @Test
  void anAppThatHasNeverRunOrHasStoppedIsNotReady() {
    assertThat(PipelineRuntime.ready(State.REBALANCING, false)).isFalse();
    assertThat(PipelineRuntime.ready(State.CREATED, false)).isFalse();
    assertThat(PipelineRuntime.ready(State.PENDING_SHUTDOWN, true)).isFalse();
    assertThat(PipelineRuntime.ready(State.NOT_RUNNING, true)).isFalse();
    assertThat(PipelineRuntime.ready(State.ERROR, true)).isFalse();
  }
}
