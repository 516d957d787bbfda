package dev.impipe.edge.app;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.runtime.topics.ImTopics;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;

/**
 * What one component sees: the runtime, with the config of its own Kafka principal ({@link ImConfig#forComponent})
 * for the clients and Streams apps it starts.
 */
final class ScopedContext implements ComponentContext {
  private final PipelineRuntime runtime;
  private final ImConfig scoped;

  ScopedContext(PipelineRuntime runtime, ImConfig scoped) {
    this.runtime = runtime;
    this.scoped = scoped;
  }

  @Override
  public ImConfig config() {
    return scoped;
  }

  @Override
  public Map<String, String> env() {
    return runtime.env();
  }

  @Override
  public ImTopics topics() {
    return runtime.topics();
  }

  @Override
  public MeterRegistry metrics() {
    return runtime.metrics();
  }

  @Override
  public HttpApi http() {
    return runtime.http();
  }

  @Override
  public String applicationServer() {
    return runtime.applicationServer();
  }

  @Override
  public java.util.Optional<KafkaStreams> streams(String name) {
    return runtime.streams(name);
  }

  @Override
  public KafkaStreams startStreams(String name, Topology topology, Map<String, Object> overrides) {
    return runtime.startStreams(name, topology, overrides, scoped);
  }

  @Override
  public void readiness(String name, BooleanSupplier ready) {
    runtime.readiness(name, ready);
  }

  @Override
  public <T extends AutoCloseable> T closeOnShutdown(T resource) {
    return runtime.closeOnShutdown(resource);
  }
}
