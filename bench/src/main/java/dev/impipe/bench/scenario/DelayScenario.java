package dev.impipe.bench.scenario;

import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.Machine;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.delay.DelayComponent;
import dev.impipe.delay.DelayConfig;
import dev.impipe.delay.DelayHeaders;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Delayed delivery: schedules spread evenly over a window, then a burst all due in the same millisecond. Reports
 * how fast the app takes schedules in, how long the burst takes to drain, lateness (never early), heap after GC.
 */
public final class DelayScenario implements Scenario {

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    long spread = options.count("spread", 200_000, 2_000);
    long burst = options.count("burst", 1_000_000, 5_000);
    long windowS = options.fixed("window", options.small() ? 5 : 30);
    String leadSetting = options.settings().getOrDefault("lead", "auto");
    long leadS = leadSetting.equals("auto") ? Math.max(options.small() ? 10 : 20, (spread + burst) / 25_000 + 10)
        : Long.parseLong(leadSetting);
    String out = cluster.createTopic("delay-out", 12);
    result.setup("spread", spread + " schedules due evenly over " + windowS + " s, starting " + leadS
        + " s after the first is produced");
    result.setup("burst", burst + " schedules due in one millisecond, 5 s after the window");
    result.setup("target topic", "a bench topic with 12 partitions; value = 16 bytes");
    result.setup("delay config", "defaults (IM_DELAY_TICK 1s, IM_DELAY_BATCH 5000, IM_DELAY_DRAIN_TICK 20ms), "
        + "IM_DELAY_TARGETS = the bench topic");

    String delayed = cluster.names().delayed();
    int size = cluster.topics().delayed().valueSerde().serializer().serialize(delayed,
        command("s1234567", System.currentTimeMillis(), out)).length + 8;
    double ceiling = Ceiling.measure(cluster, result, cluster.partitions(delayed), size,
        Ceiling.records(options, size));

    // The default allow-list is the messages topic only: allow the bench's own target.
    cluster.run(List.of(new DelayComponent()), Map.of(DelayConfig.IM_DELAY_TARGETS, out));
    long t0 = System.currentTimeMillis();
    long spreadFrom = t0 + leadS * 1000;
    long burstAt = spreadFrom + windowS * 1000 + 5_000;
    LatencyRecorder late = result.latency("lateness: delivered (record time - due)", "ms");
    LatencyRecorder seenLate = result.latency("lateness: visible to read_committed consumer", "ms");
    LatencyRecorder burstLate = result.latency("burst: visible - due", "ms");
    AtomicLong early = new AtomicLong();
    AtomicLong lastBurstSeen = new AtomicLong();
    AtomicLong burstSeen = new AtomicLong();
    Support.SendErrors errors = new Support.SendErrors();
    try (TopicWatcher watcher = new TopicWatcher(cluster, out, r -> {
      long now = System.currentTimeMillis();
      Header h = r.headers().lastHeader(DelayHeaders.SCHEDULED_AT);
      long due = Long.parseLong(new String(h.value(), StandardCharsets.UTF_8));
      if (r.timestamp() < due || now < due) {
        early.incrementAndGet();
      }
      late.record(r.timestamp() - due);
      seenLate.record(now - due);
      if (r.key()[0] == 'b') {
        burstLate.record(now - due);
        burstSeen.incrementAndGet();
        lastBurstSeen.accumulateAndGet(now, Math::max);
      }
    })) {
      AtomicLong sent = new AtomicLong();
      long produceStart = System.nanoTime();
      try (KafkaProducer<String, ScheduleCommand> producer =
          cluster.producer(cluster.topics().delayed().valueSerde().serializer());
          Progress p = Progress.start(log, result, "schedule", "commands", spread + burst, sent::get, null,
              "schedules produced")) {
        for (long i = 0; i < spread; i++) {
          String id = "s" + i;
          producer.send(new ProducerRecord<>(delayed, id, command(id, spreadFrom + i * windowS * 1000 / spread,
              out)), errors);
          sent.incrementAndGet();
        }
        for (long i = 0; i < burst; i++) {
          String id = "b" + i;
          producer.send(new ProducerRecord<>(delayed, id, command(id, burstAt, out)), errors);
          sent.incrementAndGet();
        }
        producer.flush();
      }
      errors.check();
      double produced = (System.nanoTime() - produceStart) / 1e9;
      BenchCluster.await("the delay app took every schedule in", Duration.ofMinutes(4),
          cluster.caughtUp(DelayComponent.NAME, Set.of(delayed)));
      double ingested = (System.nanoTime() - produceStart) / 1e9;
      long ingestDoneAt = System.currentTimeMillis();
      result.figure("schedules produced (load generator)", (spread + burst) / produced, "commands/s");
      result.figure("scheduling rate (app: produce start -> all committed)", (spread + burst) / ingested,
          "schedules/s");
      result.figure("scheduling / ceiling", (spread + burst) / ingested / ceiling, "ratio");
      if (ingestDoneAt > spreadFrom) {
        result.note("Ingestion finished " + (ingestDoneAt - spreadFrom) + " ms after the first schedule was due: "
            + "lateness includes that; raise --lead.");
      }
      cluster.step(String.format(java.util.Locale.ROOT, "all %,d schedules taken in after %.1f s; first due in "
          + "%.1f s, burst due in %.1f s", spread + burst, ingested,
          (spreadFrom - System.currentTimeMillis())
              / 1e3,
          (burstAt - System.currentTimeMillis()) / 1e3));
      try (Progress p = Progress.start(log, result, "deliver", "records", spread + burst, watcher::seen,
          () -> "p99 lateness so far " + seenLate.percentile(99) + " ms", "records delivered")) {
        long waitMs = Math.max(0, burstAt - System.currentTimeMillis()) + TimeUnit.MINUTES.toMillis(3);
        BenchCluster.await("every scheduled record delivered", Duration.ofMillis(waitMs), () -> {
          watcher.check();
          return watcher.seen() >= spread + burst;
        });
      }
    }
    long heap = Machine.heapAfterGc();
    result.figure("records delivered", late.count(), "records", "= " + (spread + burst),
        late.count() == spread + burst);
    result.figure("delivered early (must be 0)", early.get(), "records", "0", early.get() == 0);
    result.figure("burst drain time (due -> last burst record visible)", lastBurstSeen.get() - burstAt, "ms",
        "<= 5000 for 1M", burst >= 1_000_000 ? lastBurstSeen.get() - burstAt <= 5_000 : null);
    result.figure("burst drain rate", burstSeen.get() * 1000.0 / Math.max(1, lastBurstSeen.get() - burstAt),
        "records/s");
    result.figure("lateness p50 (visible)", seenLate.percentile(50), "ms");
    result.figure("lateness p99 (visible)", seenLate.percentile(99), "ms");
    result.figure("lateness max (visible)", seenLate.max(), "ms");
    result.figure("heap after GC (bench JVM: Streams app + load generator)", Support.mbValue(heap), "MB");
    result.note("Lateness = record timestamp (delivery) or the wall clock of a read_committed consumer minus the "
        + "requested deliverAt (header im.scheduled-at). The burst's lateness is its drain time.");
  }

  static ScheduleCommand command(String id, long dueMs, String target) {
    byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
    return ScheduleCommand.newBuilder().setId(id).setOp(ScheduleOp.SCHEDULE).setDeliverAt(Instant.ofEpochMilli(dueMs))
        .setTargetTopic(target).setKey(ByteBuffer.wrap(idBytes))
        .setValue(ByteBuffer.wrap(String.format("%-16s", id).getBytes(StandardCharsets.UTF_8)))
        .setHeaders(Map.of()).build();
  }
}
