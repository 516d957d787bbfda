package dev.impipe.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.edge.auth.TestTokens;
import dev.impipe.embedded.FreePorts;
import dev.impipe.testkit.ImContainers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * deploy/compose/docker-compose.yml as a user runs it: {@code docker-compose up -d} (Kafka, Apicurio with KafkaSQL
 * storage, the app, from the locally built images), wait for the app's /health, send and sync a message over HTTP,
 * {@code docker-compose down -v}. Runs with {@code -Dim.it.env=testcontainers}; skipped otherwise, and without Docker
 * or docker-compose.
 */
@Timeout(value = 12, unit = TimeUnit.MINUTES)
class ComposeIT {

  private static final Path COMPOSE_FILE = Path.of("compose/docker-compose.yml").toAbsolutePath();
  private static final String PROJECT = "imcomposeit" + ProcessHandle.current().pid();
  private static int port;
  private static boolean up;

  @BeforeAll
  static void up() throws Exception {
    Assumptions.assumeTrue("testcontainers".equals(System.getProperty("im.it.env", System.getenv("IM_IT_ENV"))),
        "compose test runs with -Dim.it.env=testcontainers (and Docker): skipped");
    Assumptions.assumeTrue(compose(List.of("version"), Duration.ofSeconds(30)).exit == 0,
        "docker-compose is not installed: compose test skipped");
    ImContainers.requireDockerAndImages(ImContainers.appImage(), ImContainers.kafkaImage(),
        ImContainers.apicurioImage());
    port = FreePorts.next();
    up = true;
    Result result = compose(List.of("up", "-d"), Duration.ofMinutes(5));
    assertThat(result.exit).as("docker-compose up -d:\n" + result.output).isZero();
  }

  @AfterAll
  static void down() throws Exception {
    if (up) {
      Result result = compose(List.of("down", "-v", "--timeout", "20"), Duration.ofMinutes(2));
      assertThat(result.exit).as("docker-compose down -v:\n" + result.output).isZero();
    }
  }

  @Test
  void theComposedSystemSendsAndSyncs() throws Exception {
    PipelineClient client = new PipelineClient("http://127.0.0.1:" + port);
    try {
      client.awaitHealthy(Duration.ofMinutes(4), () -> true);
    } catch (RuntimeException e) {
      throw new AssertionError("app never healthy; logs:\n"
          + compose(List.of("logs", "--tail", "60"), Duration.ofSeconds(30)).output, e);
    }
    assertThat(client.sendUntilAnswered("alice", "bob", "composed", "compose-1", Duration.ofMinutes(2))).isEqualTo(202);
    await().atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(client.messageBodies("bob")).containsExactly("composed"));
  }

  private record Result(int exit, String output) {}

  private static Result compose(List<String> args, Duration timeout) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("docker-compose", "-p", PROJECT, "-f", COMPOSE_FILE.toString()));
    command.addAll(args);
    Path out = Files.createTempFile("compose-", ".log");
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
    builder.environment().putAll(Map.of(
        "IM_AUTH_HS256_SECRET", TestTokens.SECRET_BASE64,
        "IM_HTTP_PUBLISH", Integer.toString(port),
        "IM_VERSION", ImContainers.appImage().substring(ImContainers.appImage().indexOf(':') + 1),
        "KAFKA_VERSION", ImContainers.kafkaImage().substring(ImContainers.kafkaImage().indexOf(':') + 1),
        "APICURIO_VERSION", ImContainers.apicurioImage().substring(ImContainers.apicurioImage().indexOf(':') + 1),
        "IM_CONVERSATION_PARTITIONS", "3",
        "IM_USER_PARTITIONS", "3"));
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      return new Result(127, e.toString());
    }
    if (!process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return new Result(124, "timed out: " + Files.readString(out, StandardCharsets.UTF_8));
    }
    String output = Files.readString(out, StandardCharsets.UTF_8);
    Files.deleteIfExists(out);
    return new Result(process.exitValue(), output);
  }
}
