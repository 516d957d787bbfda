package dev.impipe.bench.scenario;

import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.avro.Delivery;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.Machine;
import dev.impipe.bench.report.MemoryBreakdown;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.delay.DelayComponent;
import dev.impipe.delay.DelayConfig;
import dev.impipe.edge.app.PipelineRuntime;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * State at scale: many pending ACK timers and scheduled records (all due in 7 days) held at once by the two timer
 * apps in this JVM. Reports load rates, heap after GC and RSS before/after, state on disk, and what 10 million of
 * each would take at the measured rates.
 */
public final class ScaleScenario implements Scenario {

  static final long TARGET = 10_000_000;

  /**
   * How long the app may still need once everything is produced: 10 minutes, or as long as {@code records} take at
   * 20,000/s when that is longer (the producer outruns the apps, so at 100M most of the load is still to be taken in).
   */
  static Duration takeInTime(long records) {
    return Duration.ofSeconds(Math.max(600, records / 20_000));
  }

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    long timers = options.count("timers", 1_000_000, 10_000);
    long schedules = options.count("schedules", 1_000_000, 10_000);
    result.setup("pending ACK timers", timers + " (deliveries never ACKed, IM_ACK_TIMEOUT=7d)");
    result.setup("scheduled records", schedules + " (due in 7 days)");
    if (timers < TARGET || schedules < TARGET) {
      result.note("The target is 10M + 10M; this run held " + timers + " + " + schedules + " (the default, 1M +"
          + " 1M, fits the 5-minute budget of a default run); pass --timers 10m --schedules 10m for the full size"
          + " (see the extrapolated times below).");
    }
    String deliveries = cluster.names().deliveries();
    String delayed = cluster.names().delayed();
    String out = cluster.createTopic("scale-out", 12);
    int size = cluster.topics().deliveries().valueSerde().serializer().serialize(deliveries,
        AckWheelScenario.delivery("u1234567", "d1", 123_456_789L, Instant.now())).length + 8;
    double ceiling = Ceiling.measure(cluster, result, cluster.partitions(deliveries), size,
        Ceiling.records(options, size));

    long heapBefore = Machine.heapAfterGc();
    long rssBefore = Machine.rss();
    // The delay app only delivers to allowed topics: without the allow-list every schedule would be refused (and
    // this run measured an empty schedule store).
    PipelineRuntime runtime = cluster.run(List.of(new AckTimeoutComponent(), new DelayComponent()),
        Map.of("IM_ACK_TIMEOUT", "7d", DelayConfig.IM_DELAY_TARGETS, out));
    long heapIdle = Machine.heapAfterGc();
    long rssIdle = Machine.rss();
    Support.SendErrors errors = new Support.SendErrors();

    // Timers.
    long t0 = System.nanoTime();
    AtomicLong sent = new AtomicLong();
    try (KafkaProducer<String, Delivery> producer =
        cluster.producer(cluster.topics().deliveries().valueSerde().serializer());
        Progress p = Progress.start(log, result, "ACK timers", "deliveries", timers, sent::get,
            () -> "pending " + (long) Support.gauge(runtime, AckWheelScenario.PENDING_METRIC), "deliveries produced")) {
      long now = System.currentTimeMillis();
      int users = (int) Math.max(1, timers / 10);
      for (long i = 0; i < timers; i++) {
        String user = "u" + (i % users);
        producer.send(new ProducerRecord<>(deliveries, user, AckWheelScenario.delivery(user, "d1", i,
            Instant.ofEpochMilli(now))), errors);
        sent.incrementAndGet();
      }
      producer.flush();
      errors.check();
      BenchCluster.await("the wheel took every delivery in", takeInTime(timers),
          cluster.caughtUp(AckTimeoutComponent.NAME, Set.of(deliveries)));
    }
    double timerSeconds = (System.nanoTime() - t0) / 1e9;
    cluster.step(String.format(Locale.ROOT, "%,d timers pending after %.1f s", timers, timerSeconds));

    // Schedules.
    long t1 = System.nanoTime();
    sent.set(0);
    try (KafkaProducer<String, ScheduleCommand> producer =
        cluster.producer(cluster.topics().delayed().valueSerde().serializer());
        Progress p = Progress.start(log, result, "schedules", "commands", schedules, sent::get,
            () -> "scheduled " + (long) Support.gauge(runtime, "im.delay.scheduled"), "schedules produced")) {
      long due = System.currentTimeMillis() + Duration.ofDays(7).toMillis();
      for (long i = 0; i < schedules; i++) {
        String id = "s" + i;
        producer.send(new ProducerRecord<>(delayed, id, DelayScenario.command(id, due + i % 86_400_000L, out)),
            errors);
        sent.incrementAndGet();
      }
      producer.flush();
      errors.check();
      BenchCluster.await("the delay app took every schedule in", takeInTime(schedules),
          cluster.caughtUp(DelayComponent.NAME, Set.of(delayed)));
    }
    double scheduleSeconds = (System.nanoTime() - t1) / 1e9;
    cluster.step(String.format(Locale.ROOT, "%,d schedules held after %.1f s", schedules, scheduleSeconds));

    long heapAfter = Machine.heapAfterGc();
    long rssAfter = Machine.rss();
    Map<String, Long> memory = MemoryBreakdown.read(runtime.streams().values());
    long diskRunning = Machine.diskUsage(cluster.stateDir());
    double pendingHeld = Support.gauge(runtime, AckWheelScenario.PENDING_METRIC);
    double scheduledHeld = Support.gauge(runtime, "im.delay.scheduled");
    // Most of the state sits in RocksDB memtables (in RSS) until a flush; a clean close flushes it to disk.
    cluster.stop(runtime);
    long disk = Machine.diskUsage(cluster.stateDir());
    double timerRate = timers / timerSeconds;
    double scheduleRate = schedules / scheduleSeconds;
    result.figure("pending ACK timers held", pendingHeld, "timers", "= " + timers, pendingHeld == timers);
    result.figure("scheduled records held", scheduledHeld, "records", "= " + schedules, scheduledHeld == schedules);
    result.figure("timer load rate (produce start -> committed)", timerRate, "timers/s");
    result.figure("timer load / ceiling", timerRate / ceiling, "ratio");
    result.figure("schedule load rate (produce start -> committed)", scheduleRate, "schedules/s");
    result.figure("time for 10M timers at that rate", TARGET / timerRate, "s");
    result.figure("time for 10M schedules at that rate", TARGET / scheduleRate, "s");
    result.figure("heap after GC: before the apps", Support.mbValue(heapBefore), "MB");
    result.figure("heap after GC: apps started, empty", Support.mbValue(heapIdle), "MB");
    result.figure("heap after GC: after loading", Support.mbValue(heapAfter), "MB", "flat (state on disk)",
        heapAfter - heapIdle < 64L * 1024 * 1024);
    result.figure("RSS: before the apps", Support.mbValue(rssBefore), "MB");
    result.figure("RSS: apps started, empty", Support.mbValue(rssIdle), "MB");
    result.figure("RSS: after loading", Support.mbValue(rssAfter), "MB");
    memory.forEach((part, bytes) -> result.figure("after loading, " + part, Support.mbValue(bytes), "MB"));
    result.figure("after loading, RSS not accounted for by the JVM or RocksDB (C heap overhead)",
        Support.mbValue(rssAfter - memory.getOrDefault("nmt total", 0L) - memory.get("rocksdb memtables")
            - memory.get("rocksdb table readers") - memory.get("rocksdb block cache")),
        "MB");
    cluster.brokerPid().ifPresent(pid -> result.figure("broker JVM RSS (for reference)",
        Support.mbValue(Machine.rss(pid)), "MB"));
    result.figure("Streams state on disk while running (SST files; the rest is in memtables)",
        Support.mbValue(diskRunning), "MB");
    result.figure("Streams state on disk after a clean stop (memtables flushed)", Support.mbValue(disk), "MB");
    result.figure("state on disk per held entry", (double) disk / (timers + schedules), "bytes");
    result.note("Heap and RSS are this JVM's: both Streams apps (RocksDB is off-heap, inside RSS) and the load "
        + "generator; the broker runs in a JVM of its own. 'flat' = heap after GC grew by < 64 MB while loading.");
  }
}
