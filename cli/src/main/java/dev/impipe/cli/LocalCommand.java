package dev.impipe.cli;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.InvalidConfigException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/im local [--data-dir DIR] [--brokers N --instances M]}: runs until Ctrl-C / SIGTERM, then stops
 * everything it started. {@link #serve} is also the production {@code bin/im run} ({@link RunCommand}).
 */
@Command(name = "local", mixinStandardHelpOptions = true, sortOptions = false, description = {
    "run everything in one process: embedded Kafka broker and schema registry (unless "
        + "KAFKA_BOOTSTRAP_SERVERS / SCHEMA_REGISTRY_URL are set), topics, every Streams app and the HTTP API.",
    "With --brokers N --instances M the same as separate processes: N Kafka brokers (replication factor 3, "
        + "min.insync.replicas 2 from 3 brokers on) and M pipeline instances, HTTP ports from IM_HTTP_PORT upwards; "
        + "prints every pid with its role and port."})
final class LocalCommand implements Callable<Integer> {

  /** Set by {@code bin/im local --instances}: the instance stops when that process is gone (even after SIGKILL). */
  static final String IM_PARENT_PID = "IM_PARENT_PID";

  @Option(names = "--data-dir", paramLabel = "DIR", description = "keep the data here: a restart resumes where it "
      + "stopped (default: a temp dir removed on exit)")
  Path dataDir;

  @Option(names = "--brokers", paramLabel = "N", defaultValue = "1", description = "Kafka brokers, each a process "
      + "of its own (1-9, default ${DEFAULT-VALUE})")
  String brokers;

  @Option(names = "--instances", paramLabel = "M", defaultValue = "1", description = "pipeline instances, each a "
      + "process of its own (1-9, default ${DEFAULT-VALUE})")
  String instances;

  private final CliContext context;

  LocalCommand(CliContext context) {
    this.context = context;
  }

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

  @Override
  public Integer call() throws Exception {
    return serve(context.env(), Optional.ofNullable(dataDir), count("--brokers", brokers),
        count("--instances", instances), context.out(), true);
  }

  /**
   * Runs the pipeline until the process is stopped: {@code local} with an embedded broker and registry unless the
   * environment names them (or, with more than one broker or instance, as separate processes); {@code bin/im run}
   * ({@code local} false) against the given ones, one instance.
   */
  static int serve(Map<String, String> env, Optional<Path> dataDir, int brokers, int instances, PrintStream out,
      boolean local) throws Exception {
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
    java.util.concurrent.atomic.AtomicReference<LocalCluster> running =
        new java.util.concurrent.atomic.AtomicReference<>();
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
    for (ClusterChild c : cluster.instances()) {
      out.println("  HTTP API            " + cluster.httpUrl(c.number()) + "   (instance " + c.number() + ", pid "
          + c.pid() + ")");
    }
    cluster.secretFile()
        .ifPresent(f -> out.println("  Tokens              bin/im token alice [--device phone] [--ttl 1h]"
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
