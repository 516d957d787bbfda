package dev.impipe.bench.scenario;

import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.avro.Ack;
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
import dev.impipe.edge.app.PipelineRuntime;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * The ACK wheel under a steady load: deliveries at a fixed rate, most ACKed after a random delay shorter than the
 * timeout, a known share on devices that never ACK. Every never-ACKed seq must time out once, no ACKed one may;
 * reports the sustained rate, timeout lateness, peak pending timers and heap after GC.
 */
public final class AckWheelScenario implements Scenario {

  static final String PENDING_METRIC = "im.ack.pending.entries";

  /** Deliveries sent per loop in --rate max mode (ACKs that fell due are sent between chunks). */
  static final long MAX_RATE_CHUNK = 1_000;

  private record PendingAck(long at, String user, String device, long seq) {}

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    // --rate max: deliveries (and their ACKs) as fast as the producer gets them to the broker; the wheel keeps up
    // or lags, and the figures say which.
    boolean maxRate = "max".equalsIgnoreCase(options.settings().getOrDefault("rate", "").trim());
    long rate = maxRate ? 0 : options.fixed("rate", options.small() ? 1_000 : 5_000);
    // At max rate the input outruns the wheel many times over: a short load keeps the catch-up bounded.
    long seconds = options.fixed("duration", options.small() ? 8 : maxRate ? 15 : 60);
    double neverShare = options.fraction("never-acked", 0.1);
    long tickMs = durationMs(options, "tick", options.small() ? 200 : 1_000);
    long timeoutMs = durationMs(options, "timeout", options.small() ? 2_000 : 10_000);
    int users = (int) options.count("users", 100_000, 1_000);
    result.setup("deliveries", (maxRate ? "as fast as the broker takes them (--rate max)" : rate + "/s") + " for "
        + seconds + " s to " + users + " users");
    result.setup("never ACKed", neverShare + " of deliveries (on a device that never ACKs)");
    result.setup("ACK delay", "uniform 20 ms .. " + (timeoutMs * 8 / 10) + " ms (80% of the timeout)");
    result.setup("IM_ACK_TICK / IM_ACK_TIMEOUT", tickMs + " ms / " + timeoutMs + " ms");

    String deliveriesTopic = cluster.names().deliveries();
    String acksTopic = cluster.names().acks();
    int size = cluster.topics().deliveries().valueSerde().serializer().serialize(deliveriesTopic,
        delivery("u12345", "d1", 123_456_789L, Instant.now())).length + 6;
    double ceiling = Ceiling.measure(cluster, result, cluster.partitions(deliveriesTopic), size,
        Ceiling.records(options, size));

    PipelineRuntime runtime = cluster.run(List.of(new AckTimeoutComponent()),
        Map.of("IM_ACK_TICK", tickMs + "ms", "IM_ACK_TIMEOUT", timeoutMs + "ms"));
    Map<Long, Long> neverAcked = new ConcurrentHashMap<>();
    LatencyRecorder emitLate = result.latency("timeout lateness: emitted (record time - deadline)", "ms");
    LatencyRecorder seenLate = result.latency("timeout lateness: visible to read_committed consumer", "ms");
    AtomicLong timedOut = new AtomicLong();
    AtomicLong wrong = new AtomicLong();
    Deserializer<AckTimeout> timeouts = cluster.topics().ackTimeouts().valueSerde().deserializer();
    String timeoutsTopic = cluster.names().ackTimeouts();
    Series pendingSeries = result.series("pending timers", "entries");
    Series lagSeries = result.series("input lag (deliveries + acks)", "records");
    long peakPending = 0;
    long peakLag = 0;
    long deliveries = 0;
    long acks = 0;
    Support.SendErrors errors = new Support.SendErrors();
    try (TopicWatcher watcher = new TopicWatcher(cluster, timeoutsTopic, r -> {
      long now = System.currentTimeMillis();
      AckTimeout t = timeouts.deserialize(timeoutsTopic, r.headers(), r.value());
      for (long seq : t.getSeqs()) {
        Long pushedAt = neverAcked.remove(seq);
        if (pushedAt == null) {
          wrong.incrementAndGet();
          continue;
        }
        emitLate.record(r.timestamp() - (pushedAt + timeoutMs));
        seenLate.record(now - (pushedAt + timeoutMs));
        timedOut.incrementAndGet();
      }
    });
        KafkaProducer<String, Delivery> dp = cluster.producer(
            cluster.topics().deliveries().valueSerde().serializer());
        KafkaProducer<String, Ack> ap = cluster.producer(cluster.topics().acks().valueSerde().serializer())) {
      SplittableRandom random = new SplittableRandom(7);
      PriorityQueue<PendingAck> due = new PriorityQueue<>((a, b) -> Long.compare(a.at(), b.at()));
      long seq = 0;
      long expectedTimeouts = 0;
      AtomicLong sent = new AtomicLong();
      Support.Pacer pacer = new Support.Pacer(maxRate ? MAX_RATE_CHUNK : rate);
      long nextSample = 0;
      long lagAtEnd = 0;
      try (Progress p = Progress.start(log, result, "deliveries", "records", rate * seconds, sent::get,
          () -> "timeouts " + timedOut.get(), "deliveries sent")) {
        while (pacer.elapsedSeconds() < seconds || !due.isEmpty()) {
          long now = System.currentTimeMillis();
          if (pacer.elapsedSeconds() < seconds) {
            for (long k = maxRate ? MAX_RATE_CHUNK : pacer.due(); k > 0; k--) {
              String user = "u" + random.nextInt(users);
              long s = ++seq;
              boolean never = random.nextDouble() < neverShare;
              String device = never ? "lost" : "d1";
              if (never) {
                neverAcked.put(s, now);
                expectedTimeouts++;
              } else {
                due.add(new PendingAck(now + 20 + random.nextLong(timeoutMs * 8 / 10 - 20), user, device, s));
              }
              dp.send(new ProducerRecord<>(deliveriesTopic, user, delivery(user, device, s, Instant.ofEpochMilli(
                  now))), errors);
              deliveries++;
              sent.incrementAndGet();
            }
          }
          while (!due.isEmpty() && due.peek().at() <= now) {
            PendingAck a = due.poll();
            ap.send(new ProducerRecord<>(acksTopic, a.user(), new Ack(a.user(), a.device(), a.seq(),
                Instant.ofEpochMilli(now))), errors);
            acks++;
          }
          if (System.nanoTime() >= nextSample) {
            nextSample = System.nanoTime() + 1_000_000_000L;
            long pending = (long) Support.gauge(runtime, PENDING_METRIC);
            long lag = cluster.lag(AckTimeoutComponent.NAME, Set.of(deliveriesTopic, acksTopic));
            peakPending = Math.max(peakPending, pending);
            peakLag = Math.max(peakLag, lag);
            pendingSeries.add(result.elapsedSeconds(), pending);
            lagSeries.add(result.elapsedSeconds(), lag);
          }
          if (!maxRate) {
            pacer.pause();
          }
        }
        dp.flush();
        ap.flush();
        lagAtEnd = cluster.lag(AckTimeoutComponent.NAME, Set.of(deliveriesTopic, acksTopic));
      }
      errors.check();
      long want = expectedTimeouts;
      cluster.step("load done: " + deliveries + " deliveries, " + acks + " acks; waiting for " + want
          + " timeouts");
      long loadEnd = System.nanoTime();
      double catchUpSeconds = -1;
      if (maxRate) {
        // How long the wheel needs to read the backlog it was left with: its sustained rate includes that time.
        try {
          BenchCluster.await("the wheel read its whole input", Duration.ofMinutes(5),
              cluster.caughtUp(AckTimeoutComponent.NAME, Set.of(deliveriesTopic, acksTopic)));
          catchUpSeconds = (System.nanoTime() - loadEnd) / 1e9;
        } catch (IllegalStateException e) {
          result.note("The wheel had not read its whole input 5 minutes after the load stopped.");
        }
      }
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
      result.figure("peak input lag (deliveries + acks not yet committed)", peakLag, "records");
      result.figure("timeouts expected (never-ACKed seqs)", want, "seqs");
      result.figure("timeouts received", timedOut.get(), "seqs", "= expected", timedOut.get() == want);
      result.figure("timeouts for ACKed seqs (must be 0)", wrong.get(), "seqs", "0", wrong.get() == 0);
      result.figure("lateness p50 (emitted)", emitLate.percentile(50), "ms");
      result.figure("lateness p99 (emitted)", emitLate.percentile(99), "ms", "<= 1 tick (" + tickMs + " ms)",
          emitLate.percentile(99) <= tickMs);
      result.figure("lateness max (emitted)", emitLate.max(), "ms");
      result.figure("lateness p99 (visible)", seenLate.percentile(99), "ms");
      result.figure("peak pending timers", peakPending, "entries");
      result.figure("heap after GC (bench JVM: Streams app + load generator)", Support.mbValue(heap), "MB");
      result.note("Lateness of each timed-out seq = AckTimeout record timestamp (the punctuation time) minus its "
          + "deadline (pushedAt + timeout); 'visible' uses the wall clock when a read_committed consumer got it. "
          + "A deadline lands in slot ceil(deadline/tick), so lateness below one tick is by design.");
      result.note("The broker runs in its own JVM; heap after GC is this JVM's (System.gc() then MemoryMXBean).");
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
