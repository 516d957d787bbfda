package dev.impipe.runtime.app;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.ImTopics;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;

/**
 * What a {@link PipelineComponent} gets from the process it runs in: config, topics, metrics, Streams apps and
 * shutdown. A process with an HTTP edge hands its components the edge's context, which adds the HTTP API
 * ({@code dev.impipe.edge.app.ComponentContext}); Streams-only components need nothing of it.
 */
public interface ComponentContext {

  ImConfig config();

  /** The raw environment, for module-specific settings (each module parses its own, by a pure function). */
  Map<String, String> env();

  ImTopics topics();

  MeterRegistry metrics();

  /** {@code host:port} other instances reach this one at: the Streams apps' {@code application.server}. */
  String applicationServer();

  /**
   * Starts a Kafka Streams app with the pipeline's defaults (exactly-once v2, dead-letter queue to the rejected
   * topic, state under the configured state dir, metrics bound); {@code /health} waits for it to be RUNNING.
   *
   * @param name application id suffix; the id is the topic prefix + name
   * @param overrides Streams properties to add or replace
   */
  KafkaStreams startStreams(String name, Topology topology, Map<String, Object> overrides);

  /**
   * Adds a readiness check: {@code /health} answers 503 (and names {@code name}) while {@code ready} is false, e.g.
   * a component's own reader thread that died. A context without a {@code /health} ignores it.
   */
  default void readiness(String name, java.util.function.BooleanSupplier ready) {}

  /** Closes {@code resource} when the process stops, in reverse order of registration. */
  <T extends AutoCloseable> T closeOnShutdown(T resource);
}
