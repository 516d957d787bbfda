package dev.impipe.bench.scenario;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.MembershipChange;
import dev.impipe.bench.BenchCluster;
import dev.impipe.runtime.auth.TokenIssuer;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.Histogram;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.runtime.app.PipelineRuntime;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Sync reads: fan-out fills the inboxes, the inbox store materialises them, then HTTP
 * {@code GET /v1/users/U/devices/D/sync?limit=50} for random users and devices at a fixed concurrency (closed
 * loop: each worker sends its next request when the previous one is answered). Also runs {@code wrk} if installed.
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
        + concurrency + " concurrent closed-loop workers (java.net.http, HTTP/1.1), " + seconds + " s after a "
        + "2 s warm-up");
    double ceiling = Ceiling.measure(cluster, result, cluster.partitions(cluster.names().inbox()),
        FanoutScenario.inboxEntrySize(cluster), Ceiling.records(options, FanoutScenario.inboxEntrySize(cluster)));

    PipelineRuntime runtime = cluster.run(List.of(new FanoutComponent(), new InboxStoreComponent()),
        Map.of("IM_LARGE_GROUP_THRESHOLD", Long.toString(threshold)));
    Support.SendErrors errors = new Support.SendErrors();
    try (KafkaProducer<String, MembershipChange> producer =
             cluster.producer(cluster.topics().groupMembers().valueSerde().serializer())) {
      workload.joins(Instant.now(), (group, change) ->
          producer.send(new ProducerRecord<>(cluster.names().groupMembers(), group, change), errors));
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
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    // Authentication is on, as in production: every request carries its user's bearer token (minted up front,
    // verified by the server on every request).
    TokenIssuer issuer = cluster.tokens();
    String[] tokens = new String[users];
    for (int u = 0; u < users; u++) {
      tokens[u] = "Bearer " + issuer.issue(Workload.user(u), java.time.Duration.ofHours(2));
    }
    result.note("Authentication on: every request carries an HS256 bearer token that the server verifies.");
    runLoad(client, base, users, limit, concurrency, 2, null, null, null, log, result, tokens);
    Histogram latency = result.latency("sync request (limit " + limit + ")", "us");
    AtomicLong ok = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicLong entries = new AtomicLong();
    double elapsed = runLoad(client, base, users, limit, concurrency, seconds, latency, ok, failed, log, result,
        entries, tokens);
    double rps = ok.get() / elapsed;
    result.figure("sync requests", rps, "requests/s");
    result.figure("sync: mean entries per response", ok.get() == 0 ? 0 : (double) entries.get() / ok.get(),
        "entries");
    result.figure("sync: failed requests (non-200)", failed.get(), "requests", "0", failed.get() == 0);
    result.figure("sync latency p50 (closed loop, saturated)", latency.percentile(50) / 1000.0, "ms");
    result.figure("sync latency p99 (closed loop, saturated)", latency.percentile(99) / 1000.0, "ms");
    result.figure("sync latency max (closed loop, saturated)", latency.max() / 1000.0, "ms");

    // Saturated, a closed loop's latency is concurrency / throughput plus queueing: it measures the load generator's
    // setting more than the server. The target is checked at half the saturated rate (as the
    // fan-out latency target), open loop, each request timed from when it was due, not from when it went out, so a
    // stalled server is charged for every request it delayed.
    double halfRate = rps / 2;
    Histogram atHalf = result.latency("sync request at half the saturated rate (open loop)", "us");
    AtomicLong halfFailed = new AtomicLong();
    double offered = openLoop(client, base, users, limit, halfRate, seconds, atHalf, halfFailed, tokens);
    result.figure("sync: open-loop rate (half the saturated rate)", offered, "requests/s");
    result.figure("sync: failed requests at half rate (non-200)", halfFailed.get(), "requests", "0",
        halfFailed.get() == 0);
    result.figure("sync latency p50 at half rate", atHalf.percentile(50) / 1000.0, "ms");
    result.figure("sync latency p99 at half rate", atHalf.percentile(99) / 1000.0, "ms", "<= 10",
        atHalf.percentile(99) <= 10_000);
    result.figure("sync latency max at half rate", atHalf.max() / 1000.0, "ms");
    result.figure("ceiling (producer, for reference)", ceiling, "records/s");
    wrk(base, users, limit, concurrency, result, cluster, tokens);
    result.note("The load generator runs in the same JVM as the inbox store and competes with it for the two "
        + "cores; latency is measured client-side (request sent -> full response read).");
  }

  private static double runLoad(HttpClient client, String base, int users, int limit, int concurrency,
      long seconds, Histogram latency, AtomicLong ok, AtomicLong failed, PrintStream log, Result result,
      String[] tokens) throws InterruptedException {
    return runLoad(client, base, users, limit, concurrency, seconds, latency, ok, failed, log, result,
        new AtomicLong(), tokens);
  }

  private static final Pattern SEQ = Pattern.compile("\"seq\"");

  private static double runLoad(HttpClient client, String base, int users, int limit, int concurrency,
      long seconds, Histogram latency, AtomicLong ok, AtomicLong failed, PrintStream log, Result result,
      AtomicLong entries, String[] tokens) throws InterruptedException {
    AtomicLong done = new AtomicLong();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    long start = System.nanoTime();
    List<Thread> workers = new ArrayList<>();
    List<Throwable> problems = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int w = 0; w < concurrency; w++) {
      SplittableRandom random = new SplittableRandom(1000 + w);
      Thread t = new Thread(() -> {
        while (System.nanoTime() < deadline) {
          int user = random.nextInt(users);
          String url = base + "/v1/users/" + Workload.user(user) + "/devices/d"
              + random.nextInt(3) + "/sync?limit=" + limit;
          long t0 = System.nanoTime();
          try {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url)).GET()
                .header("Authorization", tokens[user])
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            long us = (System.nanoTime() - t0) / 1000;
            done.incrementAndGet();
            if (latency == null) {
              continue;
            }
            if (r.statusCode() == 200) {
              latency.record(us);
              ok.incrementAndGet();
              Matcher m = SEQ.matcher(r.body());
              long n = 0;
              while (m.find()) {
                n++;
              }
              entries.addAndGet(n);
            } else {
              failed.incrementAndGet();
              if (problems.size() < 3) {
                problems.add(new IllegalStateException(r.statusCode() + " " + r.body()));
              }
            }
          } catch (IOException e) {
            if (failed != null) {
              failed.incrementAndGet();
            }
            if (problems.size() < 3) {
              problems.add(e);
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }, "bench-sync-" + w);
      workers.add(t);
    }
    try (Progress p = latency == null ? null : Progress.start(log, result, "sync", "requests", 0, done::get,
        () -> "p99 so far " + latency.percentile(99) / 1000.0 + " ms", "sync requests")) {
      workers.forEach(Thread::start);
      for (Thread t : workers) {
        t.join();
      }
    }
    problems.forEach(e -> result.note("sync problem (first few shown): " + e));
    return (System.nanoTime() - start) / 1e9;
  }

  /**
   * Sends sync requests at a fixed rate for {@code seconds}, whatever the answers' pace (asynchronously, so a slow
   * answer does not delay the next request); records each latency from the moment the request was due. Returns the
   * rate actually offered.
   */
  private static double openLoop(HttpClient client, String base, int users, int limit, double rate, long seconds,
      Histogram latency, AtomicLong failed, String[] tokens) throws InterruptedException {
    SplittableRandom random = new SplittableRandom(77);
    long intervalNanos = (long) (1e9 / Math.max(1, rate));
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(seconds);
    List<java.util.concurrent.CompletableFuture<?>> pending = new ArrayList<>();
    long sent = 0;
    for (long due = start; due < end; due += intervalNanos) {
      long wait = due - System.nanoTime();
      if (wait > 0) {
        java.util.concurrent.locks.LockSupport.parkNanos(wait);
      }
      int user = random.nextInt(users);
      String url = base + "/v1/users/" + Workload.user(user) + "/devices/d" + random.nextInt(3) + "/sync?limit="
          + limit;
      long dueAt = due;
      pending.add(client.sendAsync(HttpRequest.newBuilder(URI.create(url)).GET().header("Authorization",
              tokens[user]).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString())
          .handle((r, e) -> {
            if (e == null && r.statusCode() == 200) {
              latency.record((System.nanoTime() - dueAt) / 1000);
            } else {
              failed.incrementAndGet();
            }
            return null;
          }));
      sent++;
    }
    double offered = sent / ((System.nanoTime() - start) / 1e9);
    try {
      java.util.concurrent.CompletableFuture.allOf(pending.toArray(new java.util.concurrent.CompletableFuture<?>[0]))
          .get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      failed.incrementAndGet();
    }
    return offered;
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
