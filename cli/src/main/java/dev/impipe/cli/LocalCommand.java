package dev.impipe.cli;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.config.Setting;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/** {@code bin/im local [--data-dir DIR]}: runs until Ctrl-C / SIGTERM, then stops everything it started. */
final class LocalCommand {

  /** Set by {@code bin/im local --instances}: the instance stops when that process is gone (even after SIGKILL). */
  static final String IM_PARENT_PID = "IM_PARENT_PID";

  private LocalCommand() {}

  private static void exitWithParent(Map<String, String> env) {
    Long parent = CliConfig.PARENT_PID.read(env);
    if (parent != null) {
      ProcessHandle.of(parent).ifPresentOrElse(p -> p.onExit().thenRun(() -> System.exit(0)), () -> System.exit(0));
    }
  }

  static long parsePid(String pid) {
    try {
      return Long.parseLong(pid);
    } catch (NumberFormatException e) {
      throw new InvalidConfigException(IM_PARENT_PID + "='" + pid + "' is not a process id");
    }
  }

  /**
   * {@code bin/im run}: the same process without embedded infrastructure, for production: the broker and registry
   * must be given, and {@code IM_COMPONENTS} may pick the components of this instance.
   */
  static int runAgainstExisting(String[] args, Map<String, String> env, PrintStream out) throws Exception {
    for (Setting<String> required : List.of(ImConfig.BOOTSTRAP, ImConfig.REGISTRY)) {
      if (!required.isSet(env)) {
        throw new CliException(required.name() + " must be set: `bin/im run` uses an existing broker and registry "
            + "(use `bin/im local` for embedded ones)");
      }
    }
    return run(args, env, out, false);
  }

  static int run(String[] args, Map<String, String> env, PrintStream out) throws Exception {
    return run(args, env, out, true);
  }

  private static int run(String[] args, Map<String, String> env, PrintStream out, boolean local) throws Exception {
    String usage = local ? "bin/im local [--data-dir DIR] [--brokers N] [--instances N]" : "bin/im run [--data-dir DIR]";
    Optional<Path> dataDir = Optional.empty();
    int brokers = 1;
    int instances = 1;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--data-dir") && i + 1 < args.length) {
        dataDir = Optional.of(Path.of(args[++i]));
      } else if (args[i].startsWith("--data-dir=")) {
        dataDir = Optional.of(Path.of(args[i].substring("--data-dir=".length())));
      } else if (local && (args[i].equals("--brokers") || args[i].equals("--instances")) && i + 1 < args.length) {
        int n = count(args[i], args[i + 1]);
        if (args[i++].equals("--brokers")) {
          brokers = n;
        } else {
          instances = n;
        }
      } else {
        throw new CliException("unexpected argument '" + args[i] + "'; usage: " + usage);
      }
    }
    if (brokers > 1 || instances > 1) {
      if (brokers > 1 && ImConfig.BOOTSTRAP.isSet(env)) {
        throw new CliException("--brokers starts brokers of its own: unset KAFKA_BOOTSTRAP_SERVERS or drop --brokers");
      }
      return runCluster(env, dataDir, brokers, instances, out);
    }
    exitWithParent(env);
    CountDownLatch stopped = new CountDownLatch(1);
    LocalLauncher launcher = LocalLauncher.start(env, dataDir, out);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      out.println("[im] stopping...");
      launcher.close();
      out.println("[im] stopped");
      stopped.countDown();
    }, "im-local-shutdown"));
    // bin/im run is a long-lived service: a slow first rebalance (a loaded machine, a big restore) is no reason to
    // exit, /health says DOWN meanwhile.
    launcher.awaitHealthy(local ? Duration.ofMinutes(3) : Duration.ofMinutes(30));
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

  static int count(String flag, String value) {
    try {
      int n = Integer.parseInt(value);
      if (n >= 1 && n <= 9) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new CliException(flag + " takes a number from 1 to 9, not '" + value + "'");
  }

  /** {@code --brokers N --instances M}: every broker and instance a process of its own (LocalCluster). */
  private static int runCluster(Map<String, String> env, Optional<Path> dataDir, int brokers, int instances,
      PrintStream out) throws Exception {
    CountDownLatch stopped = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicReference<LocalCluster> running = new java.util.concurrent.atomic.AtomicReference<>();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      out.println("[im] stopping...");
      LocalCluster cluster = running.get();
      if (cluster != null) {
        cluster.close();
      }
      out.println("[im] stopped");
      stopped.countDown();
    }, "im-local-shutdown"));
    LocalCluster cluster = new LocalCluster(out, true);
    running.set(cluster);
    try {
      cluster.boot(env, dataDir, brokers, instances);
    } catch (Exception | Error e) {
      cluster.close();
      throw e;
    }
    out.println();
    out.println("  Kafka bootstrap     " + cluster.bootstrapServers());
    out.println("  Schema registry     " + cluster.schemaRegistryUrl());
    for (LocalCluster.Child c : cluster.instances()) {
      out.println("  HTTP API            " + cluster.httpUrl(c.number()) + "   (instance " + c.number() + ", pid "
          + c.pid() + ")");
    }
    cluster.secretFile().ifPresent(f -> out.println("  Tokens              bin/im token alice [--device phone] [--ttl 1h]"
        + "   (HS256, secret " + f + ")"));
    out.println("  Kill any printed pid (kill -9 PID): the others carry on, and it is started again in "
        + LocalCluster.RESTART_DELAY.toSeconds() + " s");
    out.println("  Ctrl-C stops everything" + (dataDir.isPresent() ? "; data stays in " + dataDir.get()
        : " and removes its data"));
    out.flush();
    stopped.await();
    return 0;
  }
}
