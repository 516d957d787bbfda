package dev.impipe.testkit;

import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;

/**
 * Broker and registry in containers from the project's own images ({@link ImContainers}), for
 * {@code -Dim.it.env=testcontainers}; skipped cleanly without Docker.
 */
final class ContainersEnvironment {

  private ContainersEnvironment() {}

  static ItEnvironment.Endpoints startOrSkip() {
    ImContainers.requireDockerAndImages(ImContainers.kafkaImage(), ImContainers.apicurioImage());
    Network network = Network.newNetwork();
    ImContainers.KafkaNode kafka = ImContainers.kafka(network);
    GenericContainer<?> registry = ImContainers.apicurio(network);
    kafka.start();
    registry.start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      registry.stop();
      kafka.stop();
      network.close();
    }, "containers-shutdown"));
    return new ItEnvironment.Endpoints(kafka.bootstrapServers(), ImContainers.registryUrl(registry));
  }
}
