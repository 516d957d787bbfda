package dev.impipe.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/** {@code bin/im local [--data-dir DIR]}: runs until Ctrl-C / SIGTERM, then stops everything it started. */
final class LocalCommand {

  private LocalCommand() {}

  /**
   * {@code bin/im run}: the same process without embedded infrastructure, for production: the broker and registry
   * must be given, and {@code IM_COMPONENTS} may pick the components of this instance.
   */
  static int runAgainstExisting(String[] args, Map<String, String> env, PrintStream out) throws Exception {
    for (String required : new String[] {"KAFKA_BOOTSTRAP_SERVERS", "SCHEMA_REGISTRY_URL"}) {
      if (env.get(required) == null || env.get(required).isBlank()) {
        throw new CliException(required + " must be set: `bin/im run` uses an existing broker and registry "
            + "(use `bin/im local` for embedded ones)");
      }
    }
    return run(args, env, out);
  }

  static int run(String[] args, Map<String, String> env, PrintStream out) throws Exception {
    Optional<Path> dataDir = Optional.empty();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--data-dir") && i + 1 < args.length) {
        dataDir = Optional.of(Path.of(args[++i]));
      } else if (args[i].startsWith("--data-dir=")) {
        dataDir = Optional.of(Path.of(args[i].substring("--data-dir=".length())));
      } else {
        throw new CliException("unexpected argument '" + args[i] + "'; usage: bin/im local [--data-dir DIR]");
      }
    }
    CountDownLatch stopped = new CountDownLatch(1);
    LocalLauncher launcher = LocalLauncher.start(env, dataDir, out);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      out.println("[im] stopping...");
      launcher.close();
      out.println("[im] stopped");
      stopped.countDown();
    }, "im-local-shutdown"));
    launcher.awaitHealthy(Duration.ofMinutes(3));
    Endpoints e = launcher.endpoints();
    out.println();
    out.println("  Kafka bootstrap     " + e.bootstrapServers());
    out.println("  Schema registry     " + e.schemaRegistryUrl());
    out.println("  HTTP API            " + e.httpUrl() + "   (health " + e.httpUrl() + "/health, metrics "
        + e.httpUrl() + "/metrics)");
    e.authSecretFile().ifPresent(f -> out.println("  Tokens              bin/im token alice [--device phone] [--ttl 1h]"
        + "   (HS256, secret " + f + ")"));
    out.println("  In another shell:   bin/im tail im.inbox   |   bin/im produce im.messages < messages.jsonl");
    out.println("  Ctrl-C stops everything" + (dataDir.isPresent() ? "; data stays in " + dataDir.get()
        : " and removes its data"));
    out.flush();
    stopped.await();
    return 0;
  }
}
