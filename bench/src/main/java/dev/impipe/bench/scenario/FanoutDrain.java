package dev.impipe.bench.scenario;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.MembershipChange;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.bench.report.ThreadCpu;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.edge.app.PipelineRuntime;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.KafkaStreams;

/**
 * The fan-out's full-speed drain, shared by {@code bench fanout} and {@code bench conversations}: the workload's
 * memberships applied, warm-up rounds until the JIT is quiet, then a backlog of messages produced while the apps
 * are paused ({@link KafkaStreams#pause}: they stay in their groups and process nothing, so the drain measures the
 * pipeline alone, not the pipeline competing with the load generator for the cores) and drained at full speed.
 *
 * <p>The drain is over when fan-out has committed every message and its entry counter stands still; when the
 * runtime also runs {@code followers} (Streams apps reading fan-out's output, e.g. the inbox store), when those have
 * consumed their topics too.
 */
final class FanoutDrain {

  /** A warm-up round whose drain gave the JIT compilers less of the JVM's CPU than this ends the warm-up. */
  static final double JIT_QUIET = 0.05;

  /**
   * What a drain measured.
   *
   * @param entries inbox entries fan-out wrote
   * @param seconds from the first entry written to the end of the drain
   * @param expectedEntries entries if every group were write-diffused
   * @param cpu this JVM's and the broker's CPU in the drain
   * @param threads this JVM's CPU in the drain by thread kind
   * @param gcMs this JVM's collectors' time in the drain (GarbageCollectorMXBean: pauses, and G1's concurrent cycles)
   */
  record Drained(long entries, double seconds, long expectedEntries, Support.Cpu cpu, Map<String, Double> threads,
      long gcMs) {
    double rate() {
      return entries / seconds;
    }
  }

  private final BenchCluster cluster;
  private final PipelineRuntime runtime;
  private final Workload workload;
  private final Map<String, Set<String>> followers;
  private final List<KafkaStreams> apps = new ArrayList<>();
  private final Support.SendErrors errors = new Support.SendErrors();

  /** {@code followers}: app name -> the topics it must have consumed for a drain to be over. */
  FanoutDrain(BenchCluster cluster, PipelineRuntime runtime, Workload workload, Map<String, Set<String>> followers) {
    this.cluster = cluster;
    this.runtime = runtime;
    this.workload = workload;
    this.followers = Map.copyOf(followers);
    apps.add(runtime.streams().get(FanoutTopology.APP_NAME));
    followers.keySet().forEach(name -> apps.add(runtime.streams().get(name)));
  }

  KafkaStreams fanout() {
    return apps.get(0);
  }

  /** The fan-out's entry counter. */
  double entries() {
    return Support.counter(runtime, FanoutScenario.ENTRIES_METRIC);
  }

  /** Produces the workload's JOINs and waits until fan-out has applied them. */
  void joins(Result result, PrintStream log) throws Exception {
    String membersTopic = cluster.names().groupMembers();
    try (KafkaProducer<String, MembershipChange> producer =
        cluster.producer(cluster.topics().groupMembers().valueSerde().serializer())) {
      AtomicLong n = new AtomicLong();
      try (Progress p = Progress.start(log, result, "joins", "records", workload.memberships(), n::get,
          null, null)) {
        workload.joins(Instant.now(), (group, change) -> {
          producer.send(new ProducerRecord<>(membersTopic, group, change), errors);
          n.incrementAndGet();
        });
        producer.flush();
      }
    }
    errors.check();
    BenchCluster.await("fan-out has applied every JOIN", Duration.ofMinutes(5),
        cluster.caughtUp(FanoutTopology.APP_NAME, Set.of(membersTopic)));
  }

  /**
   * Warm-up: the full-speed phase is the first fan-out work of a fresh JVM, and on two cores the JIT's compiler
   * threads would take a large share of the CPU while it runs. A single warm-up backlog is not enough (C2 compiles
   * the producer's sender path after the warm-up has queued it), so the warm-up drains backlogs like the measured
   * phase until a round's drain is JIT-quiet (docs/adr/0008-benchmark-settle-phase.md). Returns its description;
   * the apps are left paused.
   */
  String warmUp(long warmup, long maxRounds) throws Exception {
    List<String> rounds = new ArrayList<>();
    for (int round = 1; warmup > 0 && round <= maxRounds; round++) {
      pause();
      produce(warmup);
      ThreadCpu roundStart = ThreadCpu.now();
      resume();
      BenchCluster.await("the warm-up messages drained", Duration.ofMinutes(5), this::caughtUp);
      double jit = FanoutScenario.jitShare(ThreadCpu.now().since(roundStart));
      rounds.add(String.format(Locale.ROOT, "%.0f%%", jit * 100));
      cluster.step(String.format(Locale.ROOT, "warm-up round %d: %,d messages fanned out, JIT compilers "
          + "%.0f%% of this JVM's CPU", round, warmup, jit * 100));
      if (jit < JIT_QUIET) {
        break;
      }
    }
    pause();
    return warmup == 0 ? "none" : rounds.size() + " round(s) of " + warmup + " messages fanned out at full speed "
        + "(a backlog, as in the measured phase), not measured; until the JIT compilers took under "
        + Math.round(JIT_QUIET * 100) + "% of this JVM's CPU in a round (at most " + maxRounds + "): "
        + String.join(", ", rounds);
  }

  /**
   * With the apps paused: produces a backlog of {@code messages} (its rate recorded as {@code label}), then resumes
   * the apps and times the drain (progress as {@code phase}).
   */
  Drained drain(long messages, Result result, PrintStream log, String phase, String label) throws Exception {
    pause();
    long expectedEntries = 0;
    long t0 = System.nanoTime();
    try (KafkaProducer<String, ChatMessage> producer =
        cluster.producer(cluster.topics().messages().valueSerde().serializer())) {
      AtomicLong n = new AtomicLong();
      try (Progress p = Progress.start(log, result, "produce", "messages", messages, n::get, null,
          "messages produced")) {
        for (long i = 0; i < messages; i++) {
          expectedEntries += FanoutScenario.send(producer, cluster.names().messages(), workload, errors)
              .recipients();
          n.incrementAndGet();
        }
        producer.flush();
      }
    }
    errors.check();
    result.figure(label, messages / ((System.nanoTime() - t0) / 1e9), "messages/s");

    double baseline = entries();
    Support.Cpu cpuStart = Support.Cpu.now(cluster.brokerPid());
    ThreadCpu threadsStart = ThreadCpu.now();
    long gcStart = Support.gcMillis();
    resume();
    long[] firstLast = new long[2];
    double written;
    try (Progress p = Progress.start(log, result, phase, "inbox entries", 0, () -> (long) (entries() - baseline),
        null, "inbox entries written")) {
      written = awaitFanout(messages, baseline, firstLast);
      if (!followers.isEmpty()) {
        BenchCluster.await("the followers of fan-out caught up", Duration.ofMinutes(4), () -> {
          boolean done = followersCaughtUp();
          firstLast[1] = System.nanoTime();
          return done;
        });
      }
    }
    Support.Cpu cpu = Support.Cpu.now(cluster.brokerPid()).since(cpuStart);
    return new Drained((long) written, (firstLast[1] - firstLast[0]) / 1e9, expectedEntries, cpu,
        ThreadCpu.now().since(threadsStart), Support.gcMillis() - gcStart);
  }

  /**
   * Waits until fan-out has committed every message and its counter stands still (large groups are read-diffused,
   * so the entry count is not known in advance: the app's own counter says how many it wrote); returns the entries
   * written, {@code firstLast}: when the first and the last were.
   */
  private double awaitFanout(long messages, double baseline, long[] firstLast) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
    long nextLagCheck = 0;
    double written = 0;
    while (true) {
      long now = System.nanoTime();
      double c = entries() - baseline;
      if (c > 0 && firstLast[0] == 0) {
        firstLast[0] = now;
      }
      if (c > written) {
        written = c;
        firstLast[1] = now;
      }
      if (now >= nextLagCheck && written > 0) {
        nextLagCheck = now + 500_000_000L;
        if (cluster.lag(FanoutTopology.APP_NAME, Set.of(cluster.names().messages())) == 0
            && entries() - baseline == written) {
          return written;
        }
      }
      if (now > deadline) {
        throw new IllegalStateException("fan-out did not drain " + messages + " messages in 4 minutes ("
            + (long) c + " entries written)");
      }
      TimeUnit.MILLISECONDS.sleep(20);
    }
  }

  private void produce(long messages) throws Exception {
    try (KafkaProducer<String, ChatMessage> producer =
        cluster.producer(cluster.topics().messages().valueSerde().serializer())) {
      for (long i = 0; i < messages; i++) {
        FanoutScenario.send(producer, cluster.names().messages(), workload, errors);
      }
      producer.flush();
    }
    errors.check();
  }

  private boolean caughtUp() {
    return cluster.caughtUp(FanoutTopology.APP_NAME, Set.of(cluster.names().messages())).getAsBoolean()
        && followersCaughtUp();
  }

  private boolean followersCaughtUp() {
    return followers.entrySet().stream()
        .allMatch(f -> cluster.caughtUp(f.getKey(), f.getValue()).getAsBoolean());
  }

  private void pause() {
    apps.forEach(KafkaStreams::pause);
  }

  private void resume() {
    apps.forEach(KafkaStreams::resume);
  }
}
