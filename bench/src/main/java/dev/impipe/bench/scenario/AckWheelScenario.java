package dev.impipe.bench.scenario;

import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.Delivery;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.Machine;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.bench.report.Series;
import dev.impipe.bench.report.ThreadCpu;
import dev.impipe.edge.app.PipelineRuntime;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * The ACK wheel under a steady load: deliveries at a fixed rate, most ACKed after a random delay shorter than the
 * timeout, a known share on devices that never ACK. Every never-ACKed seq must time out once, no ACKed one may;
 * reports the sustained rate, timeout lateness, peak pending timers and heap after GC. Warm-up rounds of the same
 * load on other users come first, until the JIT is quiet ({@link #warmUp}).
 */
public final class AckWheelScenario implements Scenario {

  static final String PENDING_METRIC = "im.ack.pending.entries";

  /** Deliveries sent per loop in --rate max mode (ACKs that fell due are sent between chunks). */
  static final long MAX_RATE_CHUNK = 1_000;

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    // --rate max: deliveries (and their ACKs) as fast as the producer gets them to the broker; the wheel keeps up
    // or lags, and the figures say which.
    boolean maxRate = maxRate(options);
    long rate = maxRate ? 0 : options.fixed("rate", options.small() ? 1_000 : 5_000);
    // At max rate the input outruns the wheel many times over: a short load keeps the catch-up bounded.
    long seconds = options.fixed("duration", options.small() ? 8 : maxRate ? 15 : 60);
    double neverShare = options.fraction("never-acked", 0.1);
    long tickMs = durationMs(options, "tick", options.small() ? 200 : 1_000);
    long timeoutMs = durationMs(options, "timeout", options.small() ? 2_000 : 10_000);
    int users = (int) options.count("users", 100_000, 1_000);
    Warmup warmup = Warmup.of(options, maxRate);
    result.setup("deliveries", (maxRate ? "as fast as the broker takes them (--rate max)" : rate + "/s") + " for "
        + seconds + " s to " + users + " users");
    result.setup("never ACKed", neverShare + " of deliveries (on a device that never ACKs)");
    result.setup("ACK delay", "uniform 20 ms .. " + (timeoutMs * 8 / 10) + " ms (80% of the timeout)");
    result.setup("IM_ACK_TICK / IM_ACK_TIMEOUT", tickMs + " ms / " + timeoutMs + " ms");

    String deliveriesTopic = cluster.names().deliveries();
    String acksTopic = cluster.names().acks();
    Set<String> inputs = Set.of(deliveriesTopic, acksTopic);
    int size = cluster.topics().deliveries().valueSerde().serializer().serialize(deliveriesTopic,
        delivery("u12345", "d1", 123_456_789L, Instant.now())).length + 6;
    double ceiling = Ceiling.measure(cluster, result, cluster.partitions(deliveriesTopic), size,
        Ceiling.records(options, size));

    PipelineRuntime runtime = cluster.run(List.of(new AckTimeoutComponent()),
        Map.of("IM_ACK_TICK", tickMs + "ms", "IM_ACK_TIMEOUT", timeoutMs + "ms"));
    Map<Long, Long> neverAcked = new ConcurrentHashMap<>();
    Map<Long, Long> warmNeverAcked = new ConcurrentHashMap<>();
    // Seqs below it are the warm-up's: their timeouts are kept out of every measured figure.
    AtomicLong firstMeasuredSeq = new AtomicLong(Long.MAX_VALUE);
    LatencyRecorder emitLate = result.latency("timeout lateness: emitted (record time - deadline)", "ms");
    LatencyRecorder seenLate = result.latency("timeout lateness: visible to read_committed consumer", "ms");
    AtomicLong timedOut = new AtomicLong();
    AtomicLong wrong = new AtomicLong();
    AtomicLong warmWrong = new AtomicLong();
    Deserializer<AckTimeout> timeouts = cluster.topics().ackTimeouts().valueSerde().deserializer();
    String timeoutsTopic = cluster.names().ackTimeouts();
    Series pendingSeries = result.series("pending timers", "entries");
    Series lagSeries = result.series("input lag (deliveries + acks)", "records");
    long[] peaks = new long[2]; // pending timers, input lag
    try (TopicWatcher watcher = new TopicWatcher(cluster, timeoutsTopic, r -> {
      long now = System.currentTimeMillis();
      AckTimeout t = timeouts.deserialize(timeoutsTopic, r.headers(), r.value());
      for (long seq : t.getSeqs()) {
        Long pushedAt = neverAcked.remove(seq);
        if (pushedAt == null) {
          if (warmNeverAcked.remove(seq) == null) {
            (seq < firstMeasuredSeq.get() ? warmWrong : wrong).incrementAndGet();
          }
          continue;
        }
        emitLate.record(r.timestamp() - (pushedAt + timeoutMs));
        seenLate.record(now - (pushedAt + timeoutMs));
        timedOut.incrementAndGet();
      }
    });
        AckWheelLoad load = new AckWheelLoad(cluster, rate, neverShare, timeoutMs, users)) {
      result.setup("warm-up", warmUp(warmup, load, cluster, watcher, inputs, warmNeverAcked, timeoutMs));
      firstMeasuredSeq.set(load.lastSeq() + 1);
      AtomicLong sent = new AtomicLong();
      long[] nextSample = {0};
      AckWheelLoad.Sent done;
      long lagAtEnd;
      ThreadCpu threadsStart = ThreadCpu.now();
      long streamStart = streamThreadMillis();
      try (Progress p = Progress.start(log, result, "deliveries", "records", rate * seconds, sent::get,
          () -> "timeouts " + timedOut.get(), "deliveries sent")) {
        done = load.run("u", seconds, neverAcked, sent, () -> {
          if (System.nanoTime() >= nextSample[0]) {
            nextSample[0] = System.nanoTime() + 1_000_000_000L;
            long pending = (long) Support.gauge(runtime, PENDING_METRIC);
            long lag = cluster.lag(AckTimeoutComponent.NAME, inputs);
            peaks[0] = Math.max(peaks[0], pending);
            peaks[1] = Math.max(peaks[1], lag);
            pendingSeries.add(result.elapsedSeconds(), pending);
            lagSeries.add(result.elapsedSeconds(), lag);
          }
        });
        lagAtEnd = cluster.lag(AckTimeoutComponent.NAME, inputs);
      }
      long deliveries = done.deliveries();
      long acks = done.acks();
      long want = done.neverAcked();
      cluster.step("load done: " + deliveries + " deliveries, " + acks + " acks; waiting for " + want
          + " timeouts");
      long loadEnd = System.nanoTime();
      double catchUpSeconds = -1;
      if (maxRate) {
        // How long the wheel needs to read the backlog it was left with: its sustained rate includes that time.
        try {
          BenchCluster.await("the wheel read its whole input", Duration.ofMinutes(5), cluster.caughtUp(
              AckTimeoutComponent.NAME, inputs));
          catchUpSeconds = (System.nanoTime() - loadEnd) / 1e9;
        } catch (IllegalStateException e) {
          result.note("The wheel had not read its whole input 5 minutes after the load stopped.");
        }
      }
      long streamMs = streamThreadMillis() - streamStart;
      try {
        BenchCluster.await("every never-ACKed seq timed out", Duration.ofMillis(timeoutMs + 120_000), () -> {
          watcher.check();
          return timedOut.get() >= want;
        });
      } catch (IllegalStateException e) {
        if (!maxRate) {
          throw e;
        }
        // At max rate the wheel may not keep up: that is a result to report, not a failed run.
        result.note("Not every never-ACKed seq had timed out " + (timeoutMs + 120_000) / 1000
            + " s after the load (see 'timeouts received').");
      }
      result.setup("CPU of this JVM in the measured phase, by thread", ThreadCpu.describe(
          ThreadCpu.now().since(threadsStart)));
      // Anything an ACKed seq wrongly produced would show within a few more ticks.
      long settle = System.currentTimeMillis() + 3 * tickMs + 500;
      BenchCluster.await("three more ticks", Duration.ofMillis(10 * tickMs + 5_000),
          () -> System.currentTimeMillis() >= settle);
      long heap = Machine.heapAfterGc();
      result.figure("deliveries sustained", deliveries / (double) seconds, "deliveries/s");
      result.figure("ACKs sustained", acks / (double) seconds, "acks/s");
      result.figure("input records / ceiling", (deliveries + acks) / (double) seconds / ceiling, "ratio");
      double processed = (deliveries + acks - lagAtEnd) / (double) seconds;
      result.figure("input records processed by the wheel during the load", processed, "records/s");
      result.figure("processed / ceiling", processed / ceiling, "ratio", ">= 0.25", processed / ceiling >= 0.25);
      result.figure("input lag when the load stopped", lagAtEnd, "records");
      if (maxRate && catchUpSeconds >= 0) {
        double sustained = (deliveries + acks) / (seconds + catchUpSeconds);
        result.figure("time to read the rest of the input after the load", catchUpSeconds, "s");
        result.figure("input records processed per second, load + catch-up", sustained, "records/s");
        result.figure("load + catch-up rate / ceiling", sustained / ceiling, "ratio");
      }
      if (maxRate) {
        // CPU per record is the steadier A/B figure on a shared machine: it does not move with the ceiling. (At a
        // fixed rate the thread's polls and rounds between records would dominate it.)
        result.figure("stream thread CPU per 1,000 input records (load + catch-up)",
            streamMs / ((deliveries + acks) / 1000.0), "CPU-ms");
      }
      result.figure("peak input lag (deliveries + acks not yet committed)", peaks[1], "records");
      result.figure("timeouts expected (never-ACKed seqs)", want, "seqs");
      result.figure("timeouts received", timedOut.get(), "seqs", "= expected", timedOut.get() == want);
      result.figure("timeouts for ACKed seqs (must be 0)", wrong.get(), "seqs", "0", wrong.get() == 0);
      result.figure("timeouts for ACKed seqs of the warm-up (must be 0)", warmWrong.get(), "seqs", "0",
          warmWrong.get() == 0);
      result.figure("lateness p50 (emitted)", emitLate.percentile(50), "ms");
      result.figure("lateness p99 (emitted)", emitLate.percentile(99), "ms", "<= 1 tick (" + tickMs + " ms)",
          emitLate.percentile(99) <= tickMs);
      result.figure("lateness max (emitted)", emitLate.max(), "ms");
      result.figure("lateness p99 (visible)", seenLate.percentile(99), "ms");
      result.figure("peak pending timers", peaks[0], "entries");
      result.figure("heap after GC (bench JVM: Streams app + load generator)", Support.mbValue(heap), "MB");
      result.note("Lateness of each timed-out seq = AckTimeout record timestamp (the punctuation time) minus its "
          + "deadline (pushedAt + timeout); 'visible' uses the wall clock when a read_committed consumer got it. "
          + "A deadline lands in slot ceil(deadline/tick), so lateness below one tick is by design.");
      result.note("The broker runs in its own JVM; heap after GC is this JVM's (System.gc() then MemoryMXBean).");
    }
  }

  /**
   * The warm-up ({@code docs/adr/0017-ackwheel-warm-up.md}): rounds of the measured load's shape and rate on other
   * users ({@code w0..}), each until the wheel has read it all, until one in which the JIT compilers took under
   * {@link FanoutDrain#JIT_QUIET} of this JVM's CPU; then it waits until the warm-up's never-ACKed seqs have timed
   * out, so none of its work falls into the measured phase. Returns its description.
   */
  private static String warmUp(Warmup warmup, AckWheelLoad load, BenchCluster cluster, TopicWatcher watcher,
      Set<String> inputs, Map<Long, Long> neverAcked, long timeoutMs) throws Exception {
    if (warmup.rounds() == 0) {
      return "none (--warmup-rounds 0)";
    }
    List<String> rounds = new ArrayList<>();
    for (int round = 1; round <= warmup.rounds(); round++) {
      ThreadCpu start = ThreadCpu.now();
      AckWheelLoad.Sent sent = load.run("w", warmup.seconds(), neverAcked, new AtomicLong(), () -> {});
      BenchCluster.await("the wheel read the warm-up round", Duration.ofMinutes(5),
          cluster.caughtUp(AckTimeoutComponent.NAME, inputs));
      double jit = FanoutScenario.jitShare(ThreadCpu.now().since(start));
      rounds.add(String.format(Locale.ROOT, "%.0f%%", jit * 100));
      cluster.step(String.format(Locale.ROOT, "warm-up round %d: %,d deliveries, %,d acks, JIT compilers %.0f%% "
          + "of this JVM's CPU", round, sent.deliveries(), sent.acks(), jit * 100));
      if (jit < FanoutDrain.JIT_QUIET) {
        break;
      }
    }
    BenchCluster.await("the warm-up's never-ACKed seqs timed out", Duration.ofMillis(timeoutMs + 120_000), () -> {
      watcher.check();
      return neverAcked.isEmpty();
    });
    return rounds.size() + " round(s) of " + warmup.seconds() + " s of the same load on other users, not measured; "
        + "until the JIT compilers took under " + Math.round(FanoutDrain.JIT_QUIET * 100) + "% of this JVM's CPU "
        + "in a round (at most " + warmup.rounds() + "): " + String.join(", ", rounds);
  }

  /** CPU time of the wheel's stream threads so far (their producers' network threads apart). */
  private static long streamThreadMillis() {
    return ThreadCpu.cpuMillis(name -> name.contains("StreamThread")
        && !name.startsWith("kafka-producer-network-thread"));
  }

  static boolean maxRate(BenchOptions options) {
    return "max".equalsIgnoreCase(options.settings().getOrDefault("rate", "").trim());
  }

  /**
   * The warm-up's settings: at most {@code rounds} rounds (0: none) of {@code seconds} of load each.
   */
  record Warmup(long rounds, long seconds) {

    static Warmup of(BenchOptions options, boolean maxRate) {
      long rounds = options.fixed("warmup-rounds", options.small() ? 1 : 8);
      long seconds = options.fixed("warmup-seconds", options.small() ? 2 : maxRate ? 5 : 10);
      if (rounds > 0 && seconds <= 0) {
        throw new IllegalArgumentException("--warmup-seconds must be at least 1 when there are warm-up rounds");
      }
      return new Warmup(rounds, seconds);
    }
  }

  static Delivery delivery(String user, String device, long seq, Instant at) {
    return Delivery.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq).setPushedAt(at).setAttempt(1)
        .build();
  }

  static long durationMs(BenchOptions options, String name, long defaultMs) {
    String v = options.settings().get(name);
    if (v == null) {
      return defaultMs;
    }
    String s = v.trim().toLowerCase(java.util.Locale.ROOT);
    if (s.endsWith("ms")) {
      return Long.parseLong(s.substring(0, s.length() - 2));
    }
    if (s.endsWith("s")) {
      return Math.round(Double.parseDouble(s.substring(0, s.length() - 1)) * 1000);
    }
    return Math.round(Double.parseDouble(s) * 1000);
  }
}
