package dev.impipe.bench.scenario;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.MembershipChange;
import dev.impipe.bench.BenchCluster;
import dev.impipe.edge.auth.TokenIssuer;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.edge.app.PipelineRuntime;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Sync reads: fan-out fills the inboxes, the inbox store materialises them, then HTTP
 * {@code GET /v1/users/U/devices/D/sync?limit=50} for random users and devices from {@link SyncLoad} in its own JVM:
 * a closed loop at a fixed concurrency (the saturated rate), then an open loop at half that rate, where the target
 * is checked. Also runs {@code wrk} if installed (a closed loop from outside Java).
 */
public final class SyncScenario implements Scenario {

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    int users = (int) options.count("users", 5_000, 500);
    int groups = (int) options.count("groups", 1_000, 100);
    long messages = options.count("messages", 60_000, 5_000);
    int concurrency = (int) options.fixed("concurrency", 8);
    long seconds = options.fixed("duration", options.small() ? 8 : 30);
    int limit = (int) options.fixed("limit", 50);
    int largeGroups = (int) options.fixed("large-groups", 0);
    int largeSize = (int) options.fixed("large-size", 2_000);
    long threshold = options.fixed("large-group-threshold", 1_000);
    Workload workload = new Workload(users, groups, largeGroups, largeGroups == 0 ? 0 : largeSize, 43,
        cluster.prefix());
    result.setup("users / groups / messages", users + " / " + groups + " (" + (largeGroups == 0 ? "no large groups"
        : largeGroups + " of " + largeSize + " members") + ") / " + messages);
    result.setup("large-group threshold (IM_LARGE_GROUP_THRESHOLD; 0 = write diffusion only)",
        Long.toString(threshold));
    result.setup("requests", "GET /v1/users/{random user}/devices/{d0|d1|d2}/sync?limit=" + limit + ", "
        + concurrency + " keep-alive connections in a closed loop for " + seconds + " s after a 2 s warm-up, then "
        + seconds + " s open loop at half the closed loop's rate (load generator in its own JVM, HTTP/1.1)");
    double ceiling = Ceiling.measure(cluster, result, cluster.partitions(cluster.names().inbox()),
        FanoutScenario.inboxEntrySize(cluster), Ceiling.records(options, FanoutScenario.inboxEntrySize(cluster)));

    PipelineRuntime runtime = cluster.run(List.of(new FanoutComponent(), new InboxStoreComponent()),
        Map.of("IM_LARGE_GROUP_THRESHOLD", Long.toString(threshold)));
    Support.SendErrors errors = new Support.SendErrors();
    try (KafkaProducer<String, MembershipChange> producer =
        cluster.producer(cluster.topics().groupMembers().valueSerde().serializer())) {
      workload.joins(Instant.now(), (group, change) -> producer
          .send(new ProducerRecord<>(cluster.names().groupMembers(), group, change), errors));
      producer.flush();
    }
    errors.check();
    BenchCluster.await("memberships applied", Duration.ofMinutes(3),
        cluster.caughtUp(FanoutTopology.APP_NAME, Set.of(cluster.names().groupMembers())));
    AtomicLong sent = new AtomicLong();
    try (KafkaProducer<String, ChatMessage> producer =
        cluster.producer(cluster.topics().messages().valueSerde().serializer());
        Progress p = Progress.start(log, result, "fill inboxes", "messages", messages, sent::get, null, null)) {
      for (long i = 0; i < messages; i++) {
        ChatMessage m = workload.next(Instant.now()).value();
        producer.send(new ProducerRecord<>(cluster.names().messages(), m.getConversationId(), m), errors);
        sent.incrementAndGet();
      }
      producer.flush();
    }
    errors.check();
    BenchCluster.await("fan-out done", Duration.ofMinutes(4),
        cluster.caughtUp(FanoutTopology.APP_NAME, Set.of(cluster.names().messages())));
    BenchCluster.await("inbox store caught up", Duration.ofMinutes(4), cluster.caughtUp(InboxStoreTopology.APP_NAME,
        Set.of(cluster.names().inbox(), cluster.names().history())));
    long inboxEntries = cluster.endOffsets(cluster.names().inbox());
    result.setup("inbox records (offsets, incl. transaction markers)", inboxEntries);
    cluster.step("inboxes filled and materialised");

    String base = "http://127.0.0.1:" + runtime.http().port();
    // Authentication is on, as in production: every request carries its user's bearer token (minted up front,
    // verified by the server on every request).
    TokenIssuer issuer = cluster.tokens();
    String[] tokens = new String[users];
    for (int u = 0; u < users; u++) {
      tokens[u] = "Bearer " + issuer.issue(Workload.user(u), java.time.Duration.ofHours(2));
    }
    result.note("Authentication on: every request carries an HS256 bearer token that the server verifies.");
    int openConnections = (int) options.fixed("open-connections", 16);
    Path dir = Files.createTempDirectory("im-bench-sync");
    try {
      Path tokensFile = dir.resolve("tokens.txt");
      Files.write(tokensFile, List.of(tokens), StandardCharsets.UTF_8);
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      List<String> cmd = List.of(java, "-Xms64m", "-Xmx64m", "-XX:+UseSerialGC", "-cp",
          System.getProperty("java.class.path"), SyncLoad.class.getName(), "127.0.0.1",
          Integer.toString(runtime.http().port()), tokensFile.toString(), Integer.toString(limit), dir.toString(),
          "2", Long.toString(seconds), Integer.toString(concurrency), Integer.toString(openConnections));
      cluster.step("load generator (own JVM, " + SyncLoad.class.getSimpleName() + "): 2 s warm-up, " + seconds
          + " s closed loop on " + concurrency + " connections, then " + seconds + " s open loop at half that "
          + "rate on " + openConnections + " connections");
      Path loadLog = dir.resolve("load.log");
      Process load = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(loadLog.toFile()).start();
      if (!load.waitFor(2 * seconds + 120, TimeUnit.SECONDS)) {
        load.destroyForcibly();
        throw new IllegalStateException("the sync load generator did not finish; its log: "
            + Files.readString(loadLog));
      }
      Files.readAllLines(loadLog, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank())
          .forEach(l -> result.note("load generator: " + l));
      if (load.exitValue() != 0) {
        throw new IllegalStateException("the sync load generator failed (exit " + load.exitValue() + ")");
      }
      LatencyRecorder latency = result.latency("sync request (limit " + limit + ")", "us");
      long[] closed = readPhase(dir.resolve("closed.txt"), latency);
      double rps = closed[0] / (closed[3] / 1e9);
      result.figure("sync requests", rps, "requests/s");
      result.figure("sync: mean entries per response", closed[0] == 0 ? 0 : (double) closed[2] / closed[0],
          "entries");
      result.figure("sync: failed requests (non-200)", closed[1], "requests", "0", closed[1] == 0);
      result.figure("sync latency p50 (closed loop, saturated)", latency.percentile(50) / 1000.0, "ms");
      result.figure("sync latency p99 (closed loop, saturated)", latency.percentile(99) / 1000.0, "ms");
      result.figure("sync latency max (closed loop, saturated)", latency.max() / 1000.0, "ms");

      // Saturated, a closed loop's latency is concurrency / throughput plus queueing: it measures the load
      // generator's setting more than the server. The target is checked at half the saturated rate (as the
      // fan-out latency target), open loop, each request timed from when it was due, not from when it went out, so a
      // stalled server is charged for every request it delayed.
      LatencyRecorder atHalf = result.latency("sync request at half the saturated rate (open loop)", "us");
      long[] open = readPhase(dir.resolve("open.txt"), atHalf);
      result.figure("sync: open-loop rate (half the saturated rate)", open[0] / (open[3] / 1e9), "requests/s");
      result.figure("sync: failed requests at half rate (non-200)", open[1], "requests", "0", open[1] == 0);
      result.figure("sync latency p50 at half rate", atHalf.percentile(50) / 1000.0, "ms");
      result.figure("sync latency p99 at half rate", atHalf.percentile(99) / 1000.0, "ms", "<= 10",
          atHalf.percentile(99) <= 10_000);
      result.figure("sync latency max at half rate", atHalf.max() / 1000.0, "ms");
    } finally {
      try (var files = Files.list(dir)) {
        for (Path f : (Iterable<Path>) files::iterator) {
          Files.deleteIfExists(f);
        }
      }
      Files.deleteIfExists(dir);
    }
    result.figure("ceiling (producer, for reference)", ceiling, "records/s");
    wrk(base, users, limit, concurrency, result, cluster, tokens);
    result.note("The load generator runs in its own small JVM (SyncLoad: plain keep-alive sockets, serial GC, 64 MB "
        + "heap) on the same two cores as everything else; latency is measured client-side (request due or sent -> "
        + "full response read).");
  }

  /** Reads one phase's file of {@link SyncLoad} into {@code latency}; returns ok, failed, entries, elapsed ns. */
  static long[] readPhase(Path file, LatencyRecorder latency) throws IOException {
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.US_ASCII)) {
      String[] head = in.readLine().split(" ");
      String line;
      while ((line = in.readLine()) != null) {
        latency.record(Long.parseLong(line));
      }
      return new long[] {Long.parseLong(head[0]), Long.parseLong(head[1]), Long.parseLong(head[2]),
          Long.parseLong(head[3])};
    }
  }

  /**
   * Drives the same endpoint with wrk when it is on the PATH (not installed by the bench): a load generator outside
   * the JVM, each request with its user's bearer token (the tokens go into the wrk script).
   */
  private static void wrk(String base, int users, int limit, int concurrency, Result result, BenchCluster cluster,
      String[] tokens) throws Exception {
    Optional<Path> wrk = onPath("wrk");
    if (wrk.isEmpty()) {
      result.note("wrk is not installed (Debian package 'wrk'): the outside check was skipped.");
      return;
    }
    Path script = Files.createTempFile("im-bench-sync", ".lua");
    try {
      StringBuilder lua = new StringBuilder("local tokens = {\n");
      for (String token : tokens) {
        lua.append("  \"").append(token).append("\",\n");
      }
      lua.append("}\nmath.randomseed(7)\nrequest = function()\n  local u = math.random(0, ").append(users - 1)
          .append(")\n  return wrk.format(\"GET\", \"/v1/users/u\" .. u .. \"/devices/d\" .. math.random(0, 2) .. ")
          .append("\"/sync?limit=").append(limit).append("\", {[\"Authorization\"] = tokens[u + 1]})\nend\n");
      Files.writeString(script, lua, StandardCharsets.UTF_8);
      List<String> cmd = List.of(wrk.get().toString(), "-t2", "-c" + concurrency, "-d10s", "--latency", "-s",
          script.toString(), base);
      cluster.step("wrk: " + String.join(" ", cmd));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(60, TimeUnit.SECONDS);
      result.setup("wrk output", out.trim());
      Matcher rps = Pattern.compile("Requests/sec:\\s+([\\d.]+)").matcher(out);
      if (rps.find()) {
        result.figure("wrk: requests", Double.parseDouble(rps.group(1)), "requests/s");
      }
      Matcher p99 = Pattern.compile("99%\\s+([\\d.]+)(us|ms|s)").matcher(out);
      if (p99.find()) {
        double v = Double.parseDouble(p99.group(1));
        double ms = switch (p99.group(2)) {
          case "us" -> v / 1000;
          case "s" -> v * 1000;
          default -> v;
        };
        result.figure("wrk: latency p99", ms, "ms", "<= 10", ms <= 10);
      }
    } finally {
      Files.deleteIfExists(script);
    }
  }

  private static Optional<Path> onPath(String name) {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir, name);
      if (Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }
}
