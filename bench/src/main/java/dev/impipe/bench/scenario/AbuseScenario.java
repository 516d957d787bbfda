package dev.impipe.bench.scenario;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.Result;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.edge.auth.TokenIssuer;
import dev.impipe.runtime.domain.Ids;
import java.io.IOException;
import java.io.PrintStream;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * One user's abuse next to a normal load: the normal load is {@link SyncScenario}'s (authenticated
 * {@code GET .../sync?limit=50} for random users, from its own JVM), measured first alone (a closed loop for the
 * saturated rate, then an open loop at half of it) and then at that same half rate while one ordinary account runs
 * the worst of DESIGN "Abuse and quotas" at once ({@link AbuseLoad}, its own JVM): never-satisfiable timeline waits,
 * a send flood to a large group with non-member READs mixed in, WebSockets under many device ids that never read a
 * fat backlog, and HTTP connections that never read a fat page. Figures: the normal load's p99 with and without the
 * abuse and their ratio (target: at most 1.2), the normal load's failures, the pipeline JVM's heap and RSS in both
 * phases, and what the attacker's requests got back.
 *
 * <p>The pipeline (ingest, fan-out, inbox store, ACK wheel, gateway) runs in a JVM of its own; everything shares the
 * machine's cores, so the attacker's own CPU is part of the figure (its flood is paced: the benchmark measures
 * isolation, not a volumetric flood that any server behind no rate limiter in front would feel).
 */
public final class AbuseScenario implements Scenario {

  static final String ATTACKER = "mallory";
  static final String LARGE_GROUP = "big";
  static final String OTHER_GROUP = "g0";

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    int users = (int) options.count("users", 2_000, 200);
    int groups = (int) options.count("groups", 400, 40);
    long messages = options.count("messages", 20_000, 2_000);
    long seconds = options.fixed("duration", options.small() ? 8 : 20);
    int waiters = (int) options.fixed("waiters", 24);
    int sockets = (int) options.fixed("sockets", options.small() ? 30 : 300);
    int slowReaders = (int) options.fixed("slow-readers", 20);
    long floodRate = options.fixed("flood-rate", 200);
    int fat = (int) options.count("fat", 300, 100);
    int largeSize = 60;
    Workload workload = new Workload(users, groups, 0, 0, 47, cluster.prefix());
    result.setup("normal load", users + " users in " + groups + " groups, " + messages + " messages; GET "
        + "/v1/users/{random user}/devices/{d0|d1|d2}/sync?limit=50 with bearer tokens: " + seconds + " s closed loop "
        + "on 8 connections, then " + seconds + " s open loop at half that rate on 16 connections (own JVM); then the "
        + "same open loop again with the abuse running");
    result.setup("abuse (one account, own JVM, for the whole second pass)", waiters + " threads each looping a sync "
        + "with groupMinSeq=" + LARGE_GROUP + ":Long.MAX; sends to a " + largeSize + "-member large group at "
        + floodRate + "/s (every tenth a READ of a group it is not in); " + sockets + " WebSockets under distinct "
        + "device ids that never read, over a backlog of " + fat + " entries of 10,000 control characters (~60 KB "
        + "each as JSON); " + slowReaders + " connections asking inbox?limit=1000 that never read");

    Map<String, String> env = Map.of("IM_LARGE_GROUP_THRESHOLD", "50");
    cluster.topics().messages().valueSerde().serializer().serialize(cluster.names().messages(),
        direct("u0", "u1", "warm", "x"));
    try (PipelineJvm pipeline = PipelineJvm.start(cluster, log, "ingest,fanout,inbox-store,ack-timeout,push-gateway",
        env)) {
      fill(cluster, workload, messages, fat, largeSize);
      TokenIssuer issuer = cluster.tokens();
      String[] tokens = new String[users];
      for (int u = 0; u < users; u++) {
        tokens[u] = "Bearer " + issuer.issue(Workload.user(u), Duration.ofHours(2));
      }
      String attacker = "Bearer " + issuer.issue(ATTACKER, Optional.empty(), Duration.ofHours(2));
      Path dir = Files.createTempDirectory("im-bench-abuse");
      try {
        Path tokensFile = dir.resolve("tokens.txt");
        Files.write(tokensFile, List.of(tokens), StandardCharsets.UTF_8);

        // Pass 1: the normal load alone.
        Sampler quiet = Sampler.start(pipeline, null);
        syncLoad(cluster, pipeline, tokensFile, dir, seconds, 0);
        quiet.stop();
        LatencyRecorder alone = result.latency("sync at half the saturated rate, alone", "us");
        long[] open1 = SyncScenario.readPhase(dir.resolve("open.txt"), alone);
        double rate = open1[0] / (open1[3] / 1e9);
        long[] closed = SyncScenario.readPhase(dir.resolve("closed.txt"),
            result.latency("sync closed loop (saturated), alone", "us"));
        result.figure("sync requests, saturated (alone)", closed[0] / (closed[3] / 1e9), "requests/s");
        result.figure("normal load: open-loop rate", rate, "requests/s");

        // Pass 2: the same rate while the attacker runs.
        Path answers = dir.resolve("abuse.txt");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process abuse = new ProcessBuilder(java, "-Xms64m", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
            AbuseLoad.class.getName(), "127.0.0.1", Integer.toString(pipeline.port()), attacker, ATTACKER,
            LARGE_GROUP, OTHER_GROUP, Long.toString(seconds + 6), Integer.toString(waiters), Long.toString(floodRate),
            Integer.toString(sockets), Integer.toString(slowReaders), answers.toString())
            .redirectErrorStream(true).redirectOutput(dir.resolve("abuse.log").toFile()).start();
        cluster.step("attacker started (pid " + abuse.pid() + ")");
        Sampler loud = Sampler.start(pipeline, abuse);
        syncLoad(cluster, pipeline, tokensFile, dir, seconds, rate);
        loud.stop();
        if (!abuse.waitFor(seconds + 60, TimeUnit.SECONDS)) {
          abuse.destroyForcibly();
          throw new IllegalStateException("the attacker did not stop: " + Files.readString(dir.resolve("abuse.log")));
        }
        LatencyRecorder under = result.latency("sync at the same rate, under abuse", "us");
        long[] open2 = SyncScenario.readPhase(dir.resolve("open.txt"), under);

        double p99Alone = alone.percentile(99) / 1000.0;
        double p99Under = under.percentile(99) / 1000.0;
        result.figure("normal load p50, alone", alone.percentile(50) / 1000.0, "ms");
        result.figure("normal load p50, under abuse", under.percentile(50) / 1000.0, "ms");
        result.figure("normal load p99, alone", p99Alone, "ms");
        result.figure("normal load p99, under abuse", p99Under, "ms");
        double ratio = p99Alone <= 0 ? 0 : p99Under / p99Alone;
        result.figure("normal load p99 under abuse / alone", ratio, "x", "<= 1.2", ratio <= 1.2);
        result.figure("normal load failures (non-200), alone / under abuse", open1[1] + open2[1], "requests", "0",
            open1[1] + open2[1] == 0);
        result.figure("pipeline heap max, alone", Support.mbValue(quiet.heap.get()), "MB");
        result.figure("pipeline heap max, under abuse", Support.mbValue(loud.heap.get()), "MB");
        result.figure("pipeline RSS max, alone", Support.mbValue(quiet.rss.get()), "MB");
        result.figure("pipeline RSS max, under abuse", Support.mbValue(loud.rss.get()), "MB");
        result.figure("pipeline CPU, alone (closed + open loop)", quiet.cpuSeconds() / (2.0 * seconds + 2),
            "cores");
        result.figure("pipeline CPU, under abuse", loud.cpuSeconds() / (seconds + 2.0), "cores");
        result.figure("attacker's own CPU (its JVM, on the same cores)", loud.otherCpuSeconds() / (seconds + 2.0),
            "cores");
        if (Files.exists(answers)) {
          for (String line : Files.readAllLines(answers, StandardCharsets.US_ASCII)) {
            String[] p = line.split(" ");
            if (p.length == 3) {
              result.figure("attacker: " + p[0] + " answered " + (p[1].equals("0") ? "(opened)" : p[1].equals("-1")
                  ? "(error or time-out)" : p[1]), Double.parseDouble(p[2]), "requests");
            }
          }
        } else {
          result.note("the attacker wrote no answers: " + Files.readString(dir.resolve("abuse.log")));
        }
      } finally {
        try (var files = Files.list(dir)) {
          for (Path f : (Iterable<Path>) files::iterator) {
            Files.deleteIfExists(f);
          }
        }
        Files.deleteIfExists(dir);
      }
    }
  }

  /** Memberships, the large group with the attacker as admin, the normal messages and the attacker's fat backlog. */
  private static void fill(BenchCluster cluster, Workload workload, long messages, int fat, int largeSize)
      throws Exception {
    Support.SendErrors errors = new Support.SendErrors();
    Instant now = Instant.now();
    try (KafkaProducer<String, MembershipChange> producer =
        cluster.producer(cluster.topics().groupMembers().valueSerde().serializer())) {
      workload.joins(now, (group, change) -> producer
          .send(new ProducerRecord<>(cluster.names().groupMembers(), group, change), errors));
      List<String> members = new ArrayList<>(List.of(ATTACKER));
      for (int i = 1; i < largeSize; i++) {
        members.add(Workload.user(i));
      }
      for (String member : members) {
        producer.send(new ProducerRecord<>(cluster.names().groupMembers(), LARGE_GROUP,
            new MembershipChange(LARGE_GROUP, member, MembershipOp.JOIN, now, null, null)), errors);
      }
      producer.flush();
    }
    errors.check();
    BenchCluster.await("memberships applied", Duration.ofMinutes(3),
        cluster.caughtUp(FanoutTopology.APP_NAME, Set.of(cluster.names().groupMembers())));
    AtomicLong sent = new AtomicLong();
    String fatBody = "\u0001".repeat(10_000);
    try (KafkaProducer<String, ChatMessage> producer =
        cluster.producer(cluster.topics().messages().valueSerde().serializer())) {
      for (long i = 0; i < messages; i++) {
        ChatMessage m = workload.next(Instant.now()).value();
        producer.send(new ProducerRecord<>(cluster.names().messages(), m.getConversationId(), m), errors);
        sent.incrementAndGet();
      }
      ChatMessage toGroup = ChatMessage.newBuilder().setMessageId("mbig").setClientMsgId("big").setAttributes(Map.of())
          .setConversationId(LARGE_GROUP).setConversationType(ConversationType.GROUP).setType(MessageType.MESSAGE)
          .setSenderId(ATTACKER).setGroupId(LARGE_GROUP).setBody("hello").setSentAt(Instant.now()).build();
      producer.send(new ProducerRecord<>(cluster.names().messages(), LARGE_GROUP, toGroup), errors);
      for (int i = 0; i < fat; i++) {
        ChatMessage m = direct(Workload.user(0), ATTACKER, "fat" + i, fatBody);
        producer.send(new ProducerRecord<>(cluster.names().messages(), m.getConversationId(), m), errors);
      }
      producer.flush();
    }
    errors.check();
    BenchCluster.await("fan-out done", Duration.ofMinutes(4),
        cluster.caughtUp(FanoutTopology.APP_NAME, Set.of(cluster.names().messages())));
    BenchCluster.await("inbox store caught up", Duration.ofMinutes(4), cluster.caughtUp(InboxStoreTopology.APP_NAME,
        Set.of(cluster.names().inbox(), cluster.names().history())));
    cluster.step("inboxes filled and materialised (" + sent.get() + " messages, " + fat + " fat entries)");
  }

  private static ChatMessage direct(String from, String to, String clientMsgId, String body) {
    return ChatMessage.newBuilder().setMessageId("m" + clientMsgId).setClientMsgId(clientMsgId)
        .setConversationId(Ids.direct(from, to)).setConversationType(ConversationType.DIRECT)
        .setType(MessageType.MESSAGE).setSenderId(from).setRecipientId(to).setBody(body).setSentAt(Instant.now())
        .setAttributes(Map.of()).build();
  }

  /** Runs {@link SyncLoad} (2 s warm-up); {@code fixedRate} 0: closed loop then half rate, else only that rate. */
  private static void syncLoad(BenchCluster cluster, PipelineJvm pipeline, Path tokens, Path dir, long seconds,
      double fixedRate) throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(java, "-Xms64m", "-Xmx64m", "-XX:+UseSerialGC", "-cp",
        System.getProperty("java.class.path"), SyncLoad.class.getName(), "127.0.0.1",
        Integer.toString(pipeline.port()), tokens.toString(), "50", dir.toString(), "2", Long.toString(seconds), "8",
        "16"));
    if (fixedRate > 0) {
      cmd.add(Double.toString(fixedRate));
    }
    cluster.step("normal load " + (fixedRate > 0 ? "at " + Math.round(fixedRate) + " requests/s" : "alone"));
    Path loadLog = dir.resolve("load.log");
    Process load = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(loadLog.toFile()).start();
    if (!load.waitFor(2 * seconds + 120, TimeUnit.SECONDS)) {
      load.destroyForcibly();
      throw new IllegalStateException("the sync load generator did not finish; its log: " + Files.readString(loadLog));
    }
    if (load.exitValue() != 0) {
      throw new IllegalStateException("the sync load generator failed: " + Files.readString(loadLog));
    }
  }

  /**
   * Samples the pipeline JVM's heap (its /metrics) and RSS every 500 ms until stopped, keeping the maxima, and the CPU
   * time the pipeline (and {@code other}, the attacker, when given) used meanwhile.
   */
  private static final class Sampler {
    final AtomicLong heap = new AtomicLong();
    final AtomicLong rss = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong otherCpuNanos = new AtomicLong();
    private long cpuStart;
    private long cpuEnd;
    private PipelineJvm pipeline;
    private Thread thread;

    static Sampler start(PipelineJvm pipeline, Process other) {
      Sampler s = new Sampler();
      s.pipeline = pipeline;
      s.cpuStart = cpuNanos(pipeline.process.toHandle());
      s.thread = new Thread(() -> {
        while (s.running.get()) {
          s.heap.accumulateAndGet((long) pipeline.metric("jvm_memory_used_bytes", "area=\"heap\""), Math::max);
          s.rss.accumulateAndGet(PipelineJvm.rss(pipeline.process.pid()), Math::max);
          if (other != null) {
            s.otherCpuNanos.accumulateAndGet(cpuNanos(other.toHandle()), Math::max);
          }
          java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
        }
      }, "abuse-sampler");
      s.thread.setDaemon(true);
      s.thread.start();
      return s;
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(5_000);
      cpuEnd = cpuNanos(pipeline.process.toHandle());
    }

    double cpuSeconds() {
      return (cpuEnd - cpuStart) / 1e9;
    }

    double otherCpuSeconds() {
      return otherCpuNanos.get() / 1e9;
    }

    private static long cpuNanos(ProcessHandle process) {
      return process.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }
  }
}
