package dev.impipe.runtime.testing;

import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/** Broker and registry in Docker containers, for users who ask for them; skipped cleanly without Docker. */
final class ContainersEnvironment {

  /** Pinned to the Kafka client version the project builds with. */
  static final String KAFKA_IMAGE = "apache/kafka:4.3.1";
  static final String REGISTRY_IMAGE = "confluentinc/cp-schema-registry:7.9.0";

  private ContainersEnvironment() {}

  static ItEnvironment.Endpoints startOrSkip() {
    boolean docker;
    try {
      docker = DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException | LinkageError e) {
      docker = false;
    }
    Assumptions.assumeTrue(docker, "im.it.env=testcontainers but Docker is not available here: skipping. "
        + "Run without -Dim.it.env to use the embedded broker and registry.");
    Network network = Network.newNetwork();
    KafkaContainer kafka = new KafkaContainer(DockerImageName.parse(KAFKA_IMAGE))
        .withNetwork(network).withNetworkAliases("kafka")
        .withListener("kafka:19092");
    kafka.start();
    GenericContainer<?> registry = new GenericContainer<>(DockerImageName.parse(REGISTRY_IMAGE))
        .withNetwork(network)
        .withExposedPorts(8081)
        .withEnv("SCHEMA_REGISTRY_HOST_NAME", "schema-registry")
        .withEnv("SCHEMA_REGISTRY_LISTENERS", "http://0.0.0.0:8081")
        .withEnv("SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS", "PLAINTEXT://kafka:19092")
        .waitingFor(Wait.forHttp("/subjects").forStatusCode(200));
    registry.start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      registry.stop();
      kafka.stop();
      network.close();
    }, "containers-shutdown"));
    return new ItEnvironment.Endpoints(kafka.getBootstrapServers(),
        "http://" + registry.getHost() + ":" + registry.getMappedPort(8081));
  }
}
