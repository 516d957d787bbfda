package dev.impipe.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.Ports;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.testkit.ImContainers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The application image itself ({@code im-pipeline:VERSION}, built by deploy/images/build.sh from the tarball) in a
 * container against the Kafka and Apicurio images: healthy, send and sync over HTTP, and exactly-once across a
 * {@code docker kill} of the app container and its restart (clients retry with the same clientMsgId). Runs with
 * {@code -Dim.it.env=testcontainers} (as {@code .ci/run} does); skipped otherwise, and without Docker.
 */
@Timeout(value = 12, unit = TimeUnit.MINUTES)
class AppContainerIT {

  private static Network network;
  private static GenericContainer<?> kafka;
  private static GenericContainer<?> apicurio;
  private static GenericContainer<?> app;

  @BeforeAll
  static void start() {
    Assumptions.assumeTrue("testcontainers".equals(System.getProperty("im.it.env", System.getenv("IM_IT_ENV"))),
        "container deployment tests run with -Dim.it.env=testcontainers (and Docker): skipped");
    ImContainers.requireDockerAndImages(ImContainers.appImage(), ImContainers.kafkaImage(),
        ImContainers.apicurioImage());
    network = Network.newNetwork();
    kafka = ImContainers.kafka(network);
    apicurio = ImContainers.apicurio(network);
    kafka.start();
    apicurio.start();
    app = new GenericContainer<>(DockerImageName.parse(ImContainers.appImage()))
        .withImagePullPolicy(ImContainers.NEVER_PULL)
        .withNetwork(network).withNetworkAliases("app")
        .withEnv(TestTokens.env())
        .withEnv("KAFKA_BOOTSTRAP_SERVERS", ImContainers.KAFKA_INTERNAL)
        .withEnv("SCHEMA_REGISTRY_URL", ImContainers.REGISTRY_INTERNAL)
        .withEnv("IM_CONVERSATION_PARTITIONS", "3")
        .withEnv("IM_USER_PARTITIONS", "3")
        .withEnv("IM_JAVA_OPTS", "-Xmx512m -XX:TieredStopAtLevel=1")
        .withExposedPorts(8080)
        .waitingFor(Wait.forHttp("/health").forPort(8080).forStatusCode(200)
            .withStartupTimeout(Duration.ofMinutes(3)));
    app.start();
  }

  @AfterAll
  static void stop() {
    for (GenericContainer<?> c : new GenericContainer<?>[] {app, apicurio, kafka}) {
      if (c != null) {
        c.stop();
      }
    }
    if (network != null) {
      network.close();
    }
  }

  @Test
  void sendsAndSyncsAndDeliversEachMessageOnceAcrossAKillOfTheAppContainer() throws Exception {
    DockerClient docker = DockerClientFactory.instance().client();
    PipelineClient client = new PipelineClient(baseUrl(docker));
    List<String> expected = new ArrayList<>();
    for (int i = 1; i <= 10; i++) {
      assertThat(client.sendUntilAnswered("alice", "bob", "m" + i, "c" + i, Duration.ofMinutes(2))).isEqualTo(202);
      expected.add("m" + i);
    }
    await().atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(client.messageBodies("bob")).containsExactlyElementsOf(expected));

    // Sends 11..20 accepted, then the container is killed (SIGKILL, no shutdown hook) and started again.
    for (int i = 11; i <= 20; i++) {
      assertThat(client.sendUntilAnswered("alice", "bob", "m" + i, "c" + i, Duration.ofMinutes(2))).isEqualTo(202);
      expected.add("m" + i);
    }
    docker.killContainerCmd(app.getContainerId()).exec();
    docker.startContainerCmd(app.getContainerId()).exec();
    PipelineClient restarted = new PipelineClient(baseUrl(docker));
    restarted.awaitHealthy(Duration.ofMinutes(3), () -> true);

    // A client that never saw its answers retries everything from 11 with the same clientMsgIds, then goes on.
    for (int i = 11; i <= 30; i++) {
      assertThat(restarted.sendUntilAnswered("alice", "bob", "m" + i, "c" + i, Duration.ofMinutes(2)))
          .isEqualTo(202);
      if (i > 20) {
        expected.add("m" + i);
      }
    }
    await().atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(restarted.messageBodies("bob")).containsExactlyElementsOf(expected));
  }

  /** The app's published port (a restarted container may be given another one). */
  private static String baseUrl(DockerClient docker) {
    Ports.Binding[] bindings = docker.inspectContainerCmd(app.getContainerId()).exec().getNetworkSettings()
        .getPorts().getBindings().get(ExposedPort.tcp(8080));
    return "http://" + app.getHost() + ":" + bindings[0].getHostPortSpec();
  }
}
