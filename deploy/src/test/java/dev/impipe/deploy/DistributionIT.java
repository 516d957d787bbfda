package dev.impipe.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.edge.auth.TestTokens;
import dev.impipe.embedded.Dirs;
import dev.impipe.embedded.FreePorts;
import dev.impipe.testkit.ItEnvironment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The distribution tarball ({@code ./mvnw package} built it in this module's target/) unpacked somewhere else and
 * started as a user would: {@code bin/im run} with nothing but a JRE (no Maven, no source tree), against the real
 * broker and registry of the IT environment, answering over HTTP.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class DistributionIT {

  private Path unpacked;
  private Process process;

  @AfterEach
  void stop() throws InterruptedException {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
    if (unpacked != null) {
      Dirs.deleteRecursively(unpacked);
    }
  }

  @Test
  void theUnpackedTarballRunsThePipelineWithOnlyAJre() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    Path tarball = tarball();
    unpacked = Files.createTempDirectory("im-dist-");
    Process tar = new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", unpacked.toString())
        .inheritIO().start();
    assertThat(tar.waitFor()).as("tar -xzf " + tarball).isZero();
    Path home = unpacked.resolve(tarball.getFileName().toString().replace(".tar.gz", ""));
    assertThat(home.resolve("bin/im")).isExecutable();
    assertThat(home.resolve("pom.xml")).doesNotExist();

    int port = FreePorts.next();
    Map<String, String> vars = new HashMap<>(TestTokens.env(Map.of(
        "KAFKA_BOOTSTRAP_SERVERS", env.bootstrapServers(),
        "SCHEMA_REGISTRY_URL", env.schemaRegistryUrl(),
        "IM_TOPIC_PREFIX", ItEnvironment.unique("dist") + ".",
        "IM_HTTP_PORT", Integer.toString(port),
        "IM_STATE_DIR", unpacked.resolve("state").toString(),
        "IM_JAVA_OPTS", "-Xms64m -Xmx512m -XX:TieredStopAtLevel=1",
        // What send + sync need: fewer Streams apps to start keeps this test short.
        "IM_COMPONENTS", "ingest,fanout,inbox-store")));
    // Only a JRE: this JVM's java.home, and a PATH without Maven.
    vars.put("JAVA_HOME", System.getProperty("java.home"));
    vars.put("PATH", "/usr/bin:/bin");
    ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/im").toString(), "run")
        .directory(unpacked.toFile()).redirectErrorStream(true)
        .redirectOutput(unpacked.resolve("im.log").toFile());
    builder.environment().clear();
    builder.environment().putAll(vars);
    process = builder.start();

    PipelineClient client = new PipelineClient("http://127.0.0.1:" + port);
    try {
      client.awaitHealthy(Duration.ofMinutes(3), process::isAlive);
    } catch (RuntimeException e) {
      throw new AssertionError("bin/im run from the tarball never became healthy; its output:\n"
          + Files.readString(unpacked.resolve("im.log")), e);
    }
    assertThat(client.sendUntilAnswered("alice", "bob", "from the tarball", "dist-1", Duration.ofMinutes(2)))
        .isEqualTo(202);
    await().atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(client.messageBodies("bob")).containsExactly("from the tarball"));
    assertThat(Files.readString(unpacked.resolve("im.log"))).doesNotContain("[im] building");
  }

  static Path tarball() throws IOException {
    try (Stream<Path> files = Files.list(Path.of("target"))) {
      List<Path> found = files.filter(p -> p.getFileName().toString().matches("im-pipeline-.*\\.tar\\.gz")).toList();
      assertThat(found).as("target/im-pipeline-*.tar.gz (built by the package phase)").hasSize(1);
      return found.get(0).toAbsolutePath();
    }
  }
}
