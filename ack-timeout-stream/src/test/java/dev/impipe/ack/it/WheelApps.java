package dev.impipe.ack.it;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.ack.wheel.AckWheelMetrics;
import dev.impipe.ack.wheel.AckWheelTopology;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.awaitility.Awaitility;

/** Starts the wheel app against the IT broker with the pipeline runtime's settings (StreamsTestConfig). */
final class WheelApps {

  private WheelApps() {}

  static ImTopics topics(String prefix, String registryUrl) {
    return new ImTopics(TopicNames.withPrefix(prefix), new RestSchemaRegistryClient(registryUrl));
  }

  /**
   * @param instanceId static group membership, so a restart after a crash takes over at once instead of waiting for
   *     the dead member's session to expire; null for dynamic membership
   */
  static Properties properties(String bootstrap, TopicNames names, String applicationId, Path stateDir,
      String instanceId) {
    Properties props = StreamsTestConfig.forBroker(bootstrap, names, applicationId, stateDir);
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 50);
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 10_000);
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1_000);
    if (instanceId != null) {
      props.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), instanceId);
    }
    return props;
  }

  static KafkaStreams startAndAwaitRunning(ImTopics topics, AckTimeoutConfig config, MeterRegistry meters,
      Properties props) {
    props.putAll(dev.impipe.ack.AckTimeoutComponent.overrides(config));
    KafkaStreams streams = new KafkaStreams(AckWheelTopology.build(topics, config, new AckWheelMetrics(meters)),
        props);
    streams.start();
    Awaitility.await("wheel app RUNNING").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
        .until(() -> streams.state() == KafkaStreams.State.RUNNING);
    // The wheel asks its thread's consumer for its inputs' lag: every stream thread's consumer must be found.
    streams.metadataForLocalThreads().forEach(t -> org.assertj.core.api.Assertions
        .assertThat(dev.impipe.runtime.streams.StreamThreadConsumers.knows(t.threadName())).as(t.threadName())
        .isTrue());
    return streams;
  }
}
