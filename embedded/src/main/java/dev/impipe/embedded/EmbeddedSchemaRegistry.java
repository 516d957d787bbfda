package dev.impipe.embedded;

import dev.impipe.runtime.config.Setting;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real schema registry: Apicurio Registry's server (fetched by the build) in a child JVM on 127.0.0.1, serving
 * the Confluent-compatible API under {@code /apis/ccompat/v7}. In-memory by default; with a Kafka bootstrap it keeps
 * its schemas in a Kafka topic (KafkaSQL storage) so they survive restarts together with the broker's data.
 */
public final class EmbeddedSchemaRegistry implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedSchemaRegistry.class);
  public static final String APICURIO_HOME_ENV = "IM_APICURIO_HOME";
  /** Declared here, documented with the launcher's settings (the embedded registry is local mode's and tests'). */
  public static final Setting<Path> APICURIO_HOME = Setting.parsed(APICURIO_HOME_ENV, "path", null, Path::of,
      "local mode and tests: the unpacked Apicurio Registry the embedded registry runs")
      .defaultDoc("(what the build fetched)");
  public static final String CCOMPAT_PATH = "/apis/ccompat/v7";

  private final Process process;
  private final int port;
  private final Path logFile;

  private EmbeddedSchemaRegistry(Process process, int port, Path logFile) {
    this.process = process;
    this.port = port;
    this.logFile = logFile;
  }

  /**
   * Starts the registry and waits until {@code /health/ready} says so.
   *
   * @param port HTTP port, 0 for any free one
   * @param kafkaBootstrap when present, KafkaSQL storage on that broker (durable); else in-memory
   * @param workDir where its log file goes
   */
  public static EmbeddedSchemaRegistry start(int port, Optional<String> kafkaBootstrap, Path workDir) {
    return start(port, kafkaBootstrap, workDir, Map.of());
  }

  /**
   * As {@link #start(int, Optional, Path)}; {@code kafkaClientProperties} (e.g. a SASL login) are given to the
   * registry's Kafka clients as {@code apicurio.kafka.common.*} in {@code workDir/config/application.properties}
   * (owner-only; the registry runs in {@code workDir}), not on its command line.
   */
  public static EmbeddedSchemaRegistry start(int port, Optional<String> kafkaBootstrap, Path workDir,
      Map<String, String> kafkaClientProperties) {
    Path home = apicurioHome();
    Path runner;
    String runnerMain;
    try (var files = Files.list(home)) {
      runner = files.filter(p -> p.getFileName().toString().endsWith("-runner.jar")).findFirst()
          .orElseThrow(() -> new IllegalStateException("No Apicurio *-runner.jar in " + home));
      runnerMain = mainClass(runner);
    } catch (IOException e) {
      throw new IllegalStateException("Apicurio Registry not found in " + home + " (run ./mvnw install, or set "
          + APICURIO_HOME_ENV + ")", e);
    }
    int httpPort = port > 0 ? port : FreePorts.next();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-Xmx384m", "-XX:TieredStopAtLevel=1",
        "-Dquarkus.http.host=127.0.0.1",
        "-Dquarkus.http.port=" + httpPort,
        "-Dquarkus.management.host=127.0.0.1",
        "-Dquarkus.management.port=" + FreePorts.next(),
        "-Dquarkus.log.console.color=false",
        // Through ParentWatchMain: the registry stops when this JVM is gone, even by SIGKILL (no orphan on the port).
        "-cp", runner + System.getProperty("path.separator") + ownCodeLocation(), ParentWatchMain.class.getName(),
        Long.toString(ProcessHandle.current().pid()), runnerMain));
    try {
      Files.createDirectories(workDir);
      Path logFile = workDir.resolve("schema-registry.log");
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
      if (kafkaBootstrap.isPresent() && !kafkaClientProperties.isEmpty()) {
        Path config = workDir.resolve("config");
        Files.createDirectories(config);
        Properties props = new Properties();
        kafkaClientProperties.forEach((k, v) -> props.setProperty("apicurio.kafka.common." + k, v));
        Path file = config.resolve("application.properties");
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try (OutputStream out = Files.newOutputStream(file)) {
          props.store(out, "Kafka client settings of the embedded registry");
        }
        builder.directory(workDir.toFile());
      }
      Map<String, String> env = builder.environment();
      kafkaBootstrap.ifPresent(bootstrap -> {
        env.put("APICURIO_STORAGE_KIND", "kafkasql");
        env.put("APICURIO_KAFKASQL_BOOTSTRAP_SERVERS", bootstrap);
        // The journal topic is the registry's whole state: never expire it.
        env.put("APICURIO_KAFKASQL_TOPIC_RETENTION_MS", "-1");
        env.put("APICURIO_KAFKASQL_CONSUMER_POLL_TIMEOUT", "500");
      });
      Process process = builder.start();
      EmbeddedSchemaRegistry registry = new EmbeddedSchemaRegistry(process, httpPort, logFile);
      try {
        registry.awaitReady(Duration.ofSeconds(120));
      } catch (RuntimeException e) {
        registry.close();
        throw e;
      }
      LOG.info("Schema registry (Apicurio, {}) ready at {}", kafkaBootstrap.isPresent() ? "kafkasql" : "in-memory",
          registry.url());
      return registry;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start the schema registry: " + e.getMessage(), e);
    }
  }

  private static String mainClass(Path jar) throws IOException {
    try (java.util.jar.JarFile file = new java.util.jar.JarFile(jar.toFile())) {
      return file.getManifest().getMainAttributes().getValue(java.util.jar.Attributes.Name.MAIN_CLASS);
    }
  }

  /** The jar (or classes directory) ParentWatchMain is loaded from. */
  private static String ownCodeLocation() {
    try {
      return Path.of(ParentWatchMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Where the unpacked Apicurio server lives: {@code IM_APICURIO_HOME}, else what the build fetched. */
  public static Path apicurioHome() {
    // Read from the process environment: its callers (local mode, test fixtures, bench) share no environment map.
    Path fromEnv = APICURIO_HOME.read(System.getenv());
    if (fromEnv != null) {
      return fromEnv;
    }
    Properties props = new Properties();
    try (InputStream in = EmbeddedSchemaRegistry.class.getResourceAsStream("/im-runtime.properties")) {
      if (in != null) {
        props.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String home = props.getProperty("apicurio.home");
    if (home == null) {
      throw new IllegalStateException("Apicurio location unknown: set " + APICURIO_HOME_ENV);
    }
    return Path.of(home);
  }

  private void awaitReady(Duration timeout) {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    URI health = URI.create("http://127.0.0.1:" + port + "/health/ready");
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("Schema registry exited with " + process.exitValue() + " during start-up; "
            + "last lines of " + logFile + ":\n" + tail(logFile, 20));
      }
      try {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(2)).build(),
            HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting for the schema registry");
      }
      try {
        process.waitFor(200, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting for the schema registry");
      }
    }
    throw new IllegalStateException("Schema registry not ready at " + health + " within " + timeout.toSeconds()
        + " s; last lines of " + logFile + ":\n" + tail(logFile, 20));
  }

  private static String tail(Path file, int lines) {
    try {
      List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /** The Confluent-compatible base URL, as {@code SCHEMA_REGISTRY_URL} takes it. */
  public String url() {
    return "http://127.0.0.1:" + port + CCOMPAT_PATH;
  }

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(15, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
