package dev.impipe.ack;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.app.PipelineComponent;
import java.time.Duration;
import java.util.Map;
import java.util.ServiceLoader;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class AckTimeoutComponentTest {

  @Test
  void bimLocalFindsTheComponentThroughTheServiceLoader() {
    assertThat(ServiceLoader.load(PipelineComponent.class).stream().map(ServiceLoader.Provider::get))
        .anySatisfy(c -> {
          assertThat(c).isInstanceOf(AckTimeoutComponent.class);
          assertThat(c.name()).isEqualTo("ack-timeout");
        });
  }

  @Test
  void theMainConsumersFetchWaitIsThePollIntervalNotHalfASecond() {
    // The end offsets a round asks for wait behind the main consumer's fetch in flight (StreamThreadConsumersIT):
    // that wait is the poll interval, a fraction of the tick, never Kafka's default 500 ms
    String fetchWait = StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG);
    for (String tick : new String[] {"10ms", "500ms", "1s", "1h"}) {
      AckTimeoutConfig config = AckTimeoutConfig.fromEnv(Map.of(AckTimeoutConfig.IM_ACK_TICK, tick,
          AckTimeoutConfig.IM_ACK_TIMEOUT, "1d"));
      Map<String, Object> overrides = AckTimeoutComponent.overrides(config);
      assertThat(overrides.get(fetchWait)).as(tick).isEqualTo((int) AckTimeoutComponent.pollMs(config));
      assertThat((int) overrides.get(fetchWait)).as(tick).isBetween(5, 100);
    }
    assertThat(AckTimeoutComponent.overrides(AckTimeoutConfig.fromEnv(Map.of(AckTimeoutConfig.IM_ACK_TICK, "1s")))
        .get(fetchWait)).isEqualTo((int) Duration.ofSeconds(1).dividedBy(20).toMillis());
  }

  @Test
  void aTaskReadsItsTwoInputsAsTheyComeNotInterleavedByRecordTime() {
    // The marks hold due slots back until both inputs are processed (AckInputLagTest); Kafka's default (0) made a
    // task with one input not buffered wait for a fetch and format a log text per record (bench ackwheel --rate max)
    assertThat(AckTimeoutComponent.overrides(AckTimeoutConfig.defaults()).get(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG))
        .isEqualTo(StreamsConfig.MAX_TASK_IDLE_MS_DISABLED);
  }

  @Test
  void oneFetchReturnsAFewHundredRecordsOfAnInputNotAMegabyte() {
    // Kafka's 1 MiB per partition queued tens of thousands of records of each of 48 inputs ahead of the next: an
    // input's records waited the 60 s grace and more (bench push, im_ack_input_wait_seconds)
    assertThat(AckTimeoutComponent.overrides(AckTimeoutConfig.defaults())
        .get(StreamsConfig.mainConsumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG))).isEqualTo(16 << 10);
  }

  @Test
  void theRecordCacheIsSizedForTheDevicesOfABusyWheelWhenItIsOn() {
    // Kafka Streams' default 10 MB held too few of the devices touched between a push and its ACK (ADR 0019)
    String cache = StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG;
    assertThat(AckTimeoutComponent.overrides(AckTimeoutConfig.fromEnv(Map.of(AckTimeoutConfig.IM_ACK_STORE_CACHE,
        "true"))).get(cache)).isEqualTo(AckTimeoutComponent.STORE_CACHE_BYTES).isEqualTo(64L << 20);
    assertThat(AckTimeoutComponent.overrides(AckTimeoutConfig.defaults())).doesNotContainKey(cache);
  }
}
