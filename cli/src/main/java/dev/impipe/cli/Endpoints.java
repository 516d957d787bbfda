package dev.impipe.cli;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.SharedSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Where a running {@code bin/im local} listens, written to {@code ~/.im/local.properties} so that {@code bin/im
 * produce}, {@code tail} and {@code token} in another shell find it without flags. Environment variables win over
 * the file.
 *
 * @param authSecretFile the file holding the HS256 secret the instance verifies tokens with, if any
 */
public record Endpoints(String bootstrapServers, String schemaRegistryUrl, String httpUrl, long pid,
    Optional<Path> authSecretFile) {

  public static final String IM_LOCAL_ENDPOINTS_FILE = SharedSettings.IM_LOCAL_ENDPOINTS_FILE;
  static final String AUTH_SECRET_FILE = "auth.secret.file";

  public Endpoints {
    java.util.Objects.requireNonNull(authSecretFile, "authSecretFile");
  }

  public Endpoints(String bootstrapServers, String schemaRegistryUrl, String httpUrl, long pid) {
    this(bootstrapServers, schemaRegistryUrl, httpUrl, pid, Optional.empty());
  }

  static Path file(Map<String, String> env) {
    return SharedSettings.LOCAL_ENDPOINTS_FILE.read(env);
  }

  void write(Map<String, String> env) {
    Properties p = new Properties();
    p.setProperty("bootstrap.servers", bootstrapServers);
    p.setProperty("schema.registry.url", schemaRegistryUrl);
    p.setProperty("http.url", httpUrl);
    p.setProperty("pid", Long.toString(pid));
    authSecretFile.ifPresent(f -> p.setProperty(AUTH_SECRET_FILE, f.toString()));
    try {
      Files.createDirectories(file(env).getParent());
      try (OutputStream out = Files.newOutputStream(file(env))) {
        p.store(out, "written by bin/im local; removed when it stops");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Removes the file if it still describes this process. */
  void remove(Map<String, String> env) {
    readFile(env).filter(e -> e.pid == pid).ifPresent(e -> {
      try {
        Files.deleteIfExists(file(env));
      } catch (IOException ignored) {
        // best effort
      }
    });
  }

  static Optional<Endpoints> readFile(Map<String, String> env) {
    Path file = file(env);
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
    } catch (IOException e) {
      return Optional.empty();
    }
    long pid = Long.parseLong(p.getProperty("pid", "-1"));
    if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
      return Optional.of(new Endpoints(p.getProperty("bootstrap.servers"), p.getProperty("schema.registry.url"),
          p.getProperty("http.url"), pid, Optional.ofNullable(p.getProperty(AUTH_SECRET_FILE)).map(Path::of)));
    }
    return Optional.empty();
  }

  /** Broker and registry for the CLI: the environment first, else a running {@code bin/im local}. */
  static Map.Entry<String, String> resolve(Map<String, String> env) {
    Optional<Endpoints> local = readFile(env);
    String bootstrap = Optional.ofNullable(ImConfig.BOOTSTRAP.read(env))
        .or(() -> local.map(Endpoints::bootstrapServers))
        .orElseThrow(() -> new CliException("No Kafka broker: set KAFKA_BOOTSTRAP_SERVERS, or start `bin/im local`"));
    String registry = Optional.ofNullable(ImConfig.REGISTRY.read(env))
        .or(() -> local.map(Endpoints::schemaRegistryUrl))
        .orElseThrow(() -> new CliException("No schema registry: set SCHEMA_REGISTRY_URL, or start `bin/im local`"));
    return Map.entry(bootstrap, registry);
  }
}
