package dev.impipe.testkit;

import com.github.dockerjava.api.command.InspectContainerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.ImagePullPolicy;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.utility.DockerImageName;

/**
 * The project's own container images (built by {@code deploy/images/build.sh}, never pulled) as Testcontainers:
 * the Kafka broker and Apicurio Registry, and the tags of the application image. No image registry is involved:
 * every container uses a pull policy that never pulls, and Ryuk / start-up checks (which pull images of their own)
 * must be off ({@code TESTCONTAINERS_RYUK_DISABLED=true}, {@code TESTCONTAINERS_CHECKS_DISABLE=true}; failsafe sets
 * both).
 */
public final class ImContainers {

  /** Never pull: the images are built locally, and no registry is reachable. */
  public static final ImagePullPolicy NEVER_PULL = image -> false;
  /** Kafka's listener inside the network (other containers use {@code kafka:9092}). */
  public static final String KAFKA_INTERNAL = "kafka:9092";
  /** The registry's Confluent-compatible URL inside the network. */
  public static final String REGISTRY_INTERNAL = "http://apicurio:8080/apis/ccompat/v7";

  private static final Properties BUILD = load();

  private ImContainers() {}

  /** {@code im-pipeline:VERSION}, or {@code -Dim.image.app}. */
  public static String appImage() {
    return System.getProperty("im.image.app", "im-pipeline:" + BUILD.getProperty("im.version"));
  }

  /** {@code im-kafka:KAFKA_VERSION}, or {@code -Dim.image.kafka}. */
  public static String kafkaImage() {
    return System.getProperty("im.image.kafka", "im-kafka:" + BUILD.getProperty("kafka.version"));
  }

  /** {@code im-apicurio:APICURIO_VERSION}, or {@code -Dim.image.apicurio}. */
  public static String apicurioImage() {
    return System.getProperty("im.image.apicurio", "im-apicurio:" + BUILD.getProperty("apicurio.version"));
  }

  /** Skips the calling test (JUnit assumption) when Docker is not reachable; fails when an image is missing. */
  public static void requireDockerAndImages(String... images) {
    boolean docker;
    try {
      docker = DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException | LinkageError e) {
      docker = false;
    }
    Assumptions.assumeTrue(docker, "Docker is not available here: container tests skipped. "
        + "Start Docker and build the images (deploy/images/build.sh, or .ci/run) to run them.");
    for (String image : images) {
      try {
        DockerClientFactory.instance().client().inspectImageCmd(image).exec();
      } catch (RuntimeException e) {
        throw new IllegalStateException("Image " + image + " is missing: build it with deploy/images/build.sh "
            + "(images are never pulled)", e);
      }
    }
  }

  /**
   * A single-node KRaft broker on {@code network} as {@code kafka:9092}, also reachable from the test JVM at
   * {@link KafkaNode#bootstrapServers()} (a second listener advertised with the mapped host port).
   */
  public static KafkaNode kafka(Network network) {
    return new KafkaNode(network);
  }

  /** Apicurio Registry on {@code network} as {@code apicurio:8080}, in-memory storage, ready when started. */
  public static GenericContainer<?> apicurio(Network network) {
    return new GenericContainer<>(DockerImageName.parse(apicurioImage()))
        .withImagePullPolicy(NEVER_PULL)
        .withNetwork(network).withNetworkAliases("apicurio")
        .withExposedPorts(8080)
        .waitingFor(Wait.forHttp("/health/ready").forPort(8080).forStatusCode(200)
            .withStartupTimeout(Duration.ofMinutes(2)));
  }

  /** The registry's Confluent-compatible URL as seen from the test JVM. */
  public static String registryUrl(GenericContainer<?> apicurio) {
    return "http://" + apicurio.getHost() + ":" + apicurio.getMappedPort(8080) + "/apis/ccompat/v7";
  }

  /** The Kafka container: waits for the advertised host port before the broker starts, like Testcontainers' own. */
  public static final class KafkaNode extends GenericContainer<KafkaNode> {
    private static final int EXTERNAL = 9094;
    private static final String ADVERTISED_FILE = "/tmp/advertised";

    KafkaNode(Network network) {
      super(DockerImageName.parse(kafkaImage()));
      withImagePullPolicy(NEVER_PULL);
      withNetwork(network).withNetworkAliases("kafka");
      withExposedPorts(EXTERNAL);
      withEnv("KAFKA_LISTENERS", "PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093,EXTERNAL://0.0.0.0:" + EXTERNAL);
      withEnv("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT");
      withCreateContainerCmdModifier(cmd -> cmd.withEntrypoint("bash", "-c",
          "while [ ! -s " + ADVERTISED_FILE + " ]; do sleep 0.1; done; "
              + "export KAFKA_ADVERTISED_LISTENERS=$(cat " + ADVERTISED_FILE + "); exec /opt/kafka/entrypoint.sh"));
      waitingFor(Wait.forLogMessage(".*Kafka Server started.*", 1).withStartupTimeout(Duration.ofMinutes(2)));
    }

    @Override
    protected void containerIsStarting(InspectContainerResponse containerInfo) {
      String advertised = "PLAINTEXT://" + KAFKA_INTERNAL + ",EXTERNAL://" + bootstrapServers();
      copyFileToContainer(Transferable.of(advertised), ADVERTISED_FILE);
    }

    /** Bootstrap servers for the test JVM. */
    public String bootstrapServers() {
      return getHost() + ":" + getMappedPort(EXTERNAL);
    }
  }

  private static Properties load() {
    Properties props = new Properties();
    try (InputStream in = ImContainers.class.getResourceAsStream("/im-runtime.properties")) {
      if (in != null) {
        props.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return props;
  }
}
