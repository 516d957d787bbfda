package dev.impipe.testkit;

import dev.impipe.embedded.EmbeddedKafka;
import dev.impipe.embedded.EmbeddedSchemaRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The broker and registry integration tests run against, one per test JVM, started on first use and stopped when
 * the JVM exits. Pluggable with {@code -Dim.it.env=} (or env {@code IM_IT_ENV}):
 * <ul>
 *   <li>{@code embedded} (default): the real Kafka broker in-process (KRaft) and Apicurio Registry in a child JVM;
 *   <li>{@code testcontainers}: the project's own Kafka and Apicurio images (deploy/images/build.sh); tests are skipped
 *       with a clear message when Docker is not available.
 * </ul>
 */
public final class ItEnvironment {

  /** What a test needs to talk to the environment. */
  public record Endpoints(String bootstrapServers, String schemaRegistryUrl) {}

  private static final AtomicInteger UNIQUE = new AtomicInteger();
  private static Endpoints shared;

  private ItEnvironment() {}

  /** The shared environment, started on first call. */
  public static synchronized Endpoints get() {
    if (shared == null) {
      String kind = Optional.ofNullable(System.getProperty("im.it.env"))
          .or(() -> Optional.ofNullable(System.getenv("IM_IT_ENV"))).orElse("embedded").toLowerCase(Locale.ROOT);
      shared = switch (kind) {
        case "embedded" -> startEmbedded();
        case "testcontainers" -> ContainersEnvironment.startOrSkip();
        default -> throw new IllegalArgumentException("im.it.env must be embedded or testcontainers, not " + kind);
      };
    }
    return shared;
  }

  /** A name no other test in this JVM uses (topic prefixes, application ids). */
  public static String unique(String base) {
    return base + "-" + ProcessHandle.current().pid() + "-" + UNIQUE.incrementAndGet();
  }

  private static Endpoints startEmbedded() {
    // Data dirs where tests keep theirs (TestTmpDir: /dev/shm where it has room): the KRaft metadata log syncs on
    // every write, which on a disk costs each topic an IT creates.
    EmbeddedKafka kafka;
    Path work;
    try {
      kafka = EmbeddedKafka.start(Files.createTempDirectory(TestTmpDir.parent(), "im-kafka-"), true, 0, 0, Map.of());
      work = Files.createTempDirectory(TestTmpDir.parent(), "im-it-registry-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    EmbeddedSchemaRegistry registry = EmbeddedSchemaRegistry.start(0, Optional.empty(), work);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      registry.close();
      kafka.close();
      dev.impipe.embedded.Dirs.deleteRecursively(work);
    }, "it-environment-shutdown"));
    return new Endpoints(kafka.bootstrapServers(), registry.url());
  }
}
