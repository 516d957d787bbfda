package dev.impipe.bench.scenario;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.bench.report.ThreadCpu;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.edge.app.PipelineRuntime;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Fan-out: inbox entries per second at full speed (a backlog of messages drained by the fan-out app, exactly-once
 * on), then end-to-end latency (message {@code sentAt} -> inbox entry visible to a {@code read_committed}
 * consumer) at half that rate.
 */
public final class FanoutScenario implements Scenario {

  static final String ENTRIES_METRIC = "im.fanout.inbox.entries";
  static final String SAVED_METRIC = "im.fanout.writes.saved";

  private static final java.util.regex.Pattern ROCKSDB_THREADS = java.util.regex.Pattern.compile("^rocksdb:.*");

  /** The workload's seed: the groups and their members follow from it (FanoutLoad builds the same ones). */
  static final long WORKLOAD_SEED = 42;

  /** The JIT compilers' share of the CPU in {@code byKind} ({@link ThreadCpu#since}). */
  static double jitShare(Map<String, Double> byKind) {
    double total = byKind.values().stream().mapToDouble(Double::doubleValue).sum();
    return total <= 0 ? 0 : byKind.getOrDefault(ThreadCpu.JIT_COMPILERS, 0.0) / total;
  }

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    int users = (int) options.count("users", 50_000, 1_000);
    int groups = (int) options.count("groups", 10_000, 100);
    int large = (int) options.count("large-groups", 4, 1);
    int largeSize = (int) Math.min(users, options.fixed("large-size", 4_000));
    long messages = options.count("messages", 200_000, 5_000);
    long warmup = options.count("warmup", 100_000, 0);
    long warmupRounds = Math.max(1, options.fixed("warmup-rounds", 8));
    long latencySeconds = options.fixed("duration", options.small() ? 10 : 30);
    Workload workload = new Workload(users, groups, large, largeSize, WORKLOAD_SEED, cluster.prefix());
    result.setup("users", users);
    result.setup("groups", groups + " (" + large + " large of up to " + largeSize + " members, largest "
        + workload.largestGroup() + "; the rest 90% 3-10 members, 10% 11-100)");
    result.setup("memberships", workload.memberships());
    result.setup("messages (full-speed phase)", messages + ", half direct, half group; body 64 chars");
    result.setup("mean inbox entries per message", Math.round(workload.meanEntriesPerMessage() * 100) / 100.0);
    result.setup("latency phase", latencySeconds + " s at half the full-speed rate");
    result.setup("partitions", "im.messages " + cluster.partitions(cluster.names().messages()) + ", im.inbox "
        + cluster.partitions(cluster.names().inbox()));
    result.setup("processing.guarantee", "exactly_once_v2 (pipeline default), commit interval "
        + FanoutConfig.COMMIT_INTERVAL.read(cluster.env(Map.of())).toMillis() + " ms (IM_FANOUT_COMMIT_INTERVAL)");

    // The ceiling: raw producer at the size of an inbox entry.
    int entrySize = inboxEntrySize(cluster);
    double ceiling = Ceiling.measure(cluster, result, cluster.partitions(cluster.names().inbox()), entrySize,
        Ceiling.records(options, entrySize));

    // Membership first, then the app is paused while each backlog is produced (FanoutDrain).
    long threshold = options.fixed("large-group-threshold", 1_000);
    result.setup("large-group threshold (IM_LARGE_GROUP_THRESHOLD; 0 = write diffusion only)",
        Long.toString(threshold));
    PipelineRuntime runtime = cluster.run(List.of(new FanoutComponent()),
        Map.of("IM_LARGE_GROUP_THRESHOLD", Long.toString(threshold)));
    FanoutDrain drain = new FanoutDrain(cluster, runtime, workload, Map.of());
    KafkaStreams app = drain.fanout();
    Support.SendErrors errors = new Support.SendErrors();
    String messagesTopic = cluster.names().messages();
    drain.joins(result, log);
    // Messages fanned out in the warm-up are not counted (the counters' baselines are taken after them).
    result.setup("warm-up", drain.warmUp(warmup, warmupRounds));
    double savedBaseline = Support.counter(runtime, SAVED_METRIC);
    cluster.step("memberships applied; fan-out paused");

    // The backlog, then full speed: the app drains it.
    FanoutDrain.Drained drained = drain.drain(messages, result, log, "fan-out (full speed)",
        "messages produced (load generator, app paused)");
    Support.Cpu cpu = drained.cpu();
    result.setup("CPU of this JVM in the full-speed phase, by thread", ThreadCpu.describe(drained.threads()));
    long expectedEntries = drained.expectedEntries();
    long total = drained.entries();
    double seconds = drained.seconds();
    double entryRate = total / seconds;
    double ratio = entryRate / ceiling;
    result.figure("fan-out: inbox entries written (full speed, EOS)", entryRate, "entries/s");
    result.figure("fan-out: messages fanned out (full speed)", messages / seconds, "messages/s");
    result.figure("fan-out / ceiling", ratio, "ratio", ">= 0.6", ratio >= 0.6);
    // CPU per 1,000 messages is the steadier A/B figure on a shared VM: it does not move with the ceiling.
    result.figure("CPU per 1,000 messages, full speed: this JVM (fan-out app)", cpu.self() * 1000 / messages,
        "CPU-s");
    result.figure("CPU per 1,000 messages, full speed: broker JVM", cpu.broker() * 1000 / messages, "CPU-s");
    double saved = Support.counter(runtime, SAVED_METRIC) - savedBaseline;
    result.figure("inbox writes saved by read diffusion (large groups)", saved, "entries");
    result.figure("inbox writes saved / writes without hybrid mode", saved / (total + saved), "ratio");
    result.setup("inbox entries of the full-speed phase", total + " (" + expectedEntries + " if every group were "
        + "write-diffused; groups at IM_LARGE_GROUP_THRESHOLD members, default 1000, are read-diffused: one entry "
        + "to the group timeline)");
    cluster.step(String.format(java.util.Locale.ROOT, "full speed: %,d entries in %.1f s = %,.0f entries/s "
        + "(%.0f%% of the raw producer's %,.0f records/s)", total, seconds, entryRate, ratio * 100, ceiling));

    // Latency at half that rate.
    double messageRate = entryRate / 2 / ((double) total / messages);
    result.setup("latency phase rate", Math.round(messageRate) + " messages/s = "
        + Math.round(messageRate * total / messages) + " entries/s (half of full speed)");
    // The first seconds at half rate follow the full-speed burst and exercise code the warm-up did not (the load
    // generator beside the fan-out, the read_committed watcher, and in the broker the many small produce and fetch
    // requests of a steady half rate): both JVMs' JIT compilers are busy and the machine is near saturation. A
    // running service has paid that once, long ago: those seconds are recorded apart, so the target is checked on
    // the steady state it is stated for. The broker's JIT takes longest (quiet after 25-30 s), so the settle lasts
    // 45 s by default (measurements: docs/adr/0008-benchmark-settle-phase.md).
    long settleSeconds = options.fixed("settle", 45);
    result.setup("latency phase settling", settleSeconds + " s at half rate first, recorded apart (messages sent "
        + "then are in the 'settling' row, not in the target's)");
    LatencyRecorder settling = result.latency("sentAt -> inbox entry visible, settling (first " + settleSeconds
        + " s, not the target's)", "ms");
    LatencyRecorder latency = result.latency("sentAt -> inbox entry visible (read_committed)", "ms");
    long expected = 0;
    double before = Support.counter(runtime, ENTRIES_METRIC);
    ThreadCpu latencyThreadsStart = ThreadCpu.now();
    AtomicLong measureFrom = new AtomicLong(System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(settleSeconds));
    // --load-jvm 1: the half-rate load comes from a JVM of its own (FanoutLoad), not from a thread of the app's.
    boolean loadJvm = options.fixed("load-jvm", 0) > 0;
    result.setup("latency phase load generator", loadJvm ? "own JVM (FanoutLoad, --load-jvm 1)"
        : "a thread of the app's JVM (--load-jvm 0)");
    // --stages 1: two more consumers split the latency into its legs, each with its p99 per second: sentAt -> the
    // message readable on im.messages (load generator's producer + broker), and sentAt -> the inbox entry appended
    // (read_uncommitted: before its transaction ends). They take CPU from the rest, so they are off by default.
    boolean stages = options.fixed("stages", 0) > 0;
    result.setup("latency stages (--stages 1)", stages ? "recorded (two more consumers on the machine)" : "off");
    TopicWatcher inputWatcher = null;
    TopicWatcher appendWatcher = null;
    if (stages) {
      LatencyRecorder input = result.latency("stage: sentAt -> message readable on im.messages", "ms");
      LatencyRecorder appended = result.latency("stage: sentAt -> inbox entry appended (read_uncommitted)", "ms");
      inputWatcher = new TopicWatcher(cluster, messagesTopic, false, r -> {
        if (r.timestamp() >= measureFrom.get()) {
          input.record(System.currentTimeMillis() - r.timestamp());
        }
      });
      appendWatcher = new TopicWatcher(cluster, cluster.names().inbox(), false, r -> {
        if (r.timestamp() >= measureFrom.get()) {
          appended.record(System.currentTimeMillis() - r.timestamp());
        }
      });
    }
    try (TopicWatcher watcher = new TopicWatcher(cluster, cluster.names().inbox(), r -> {
      long now = System.currentTimeMillis();
      (r.timestamp() < measureFrom.get() ? settling : latency).record(now - r.timestamp());
    });
        KafkaProducer<String, ChatMessage> producer =
            cluster.producer(cluster.topics().messages().valueSerde().serializer())) {
      Support.Pacer pacer = new Support.Pacer(messageRate);
      // Beside the latency of each second: how long the app spent committing and in GC pauses in it, the CPU the
      // stream thread and the broker got, and how long transactions stayed open, to tell what a slow second came from.
      try (Progress p = Progress.start(log, result, "latency at half rate", "entries visible", 0, watcher::seen,
          () -> "p99 so far " + latency.percentile(99) + " ms", "inbox entries visible");
          Progress commits = Progress.start(log, result, "fan-out in commit", "ms", 0,
              () -> (long) (Support.streamsMetricSum(app, "flush-time-ns-total")
                  + Support.streamsMetricSum(app, "txn-commit-time-ns-total")) / 1_000_000,
              null,
              "fan-out time in flush + transaction commit");
          Progress gc = Progress.start(log, result, "GC pauses", "ms", 0, Support::gcMillis, null,
              "GC time of the app's JVM");
          Progress streamCpu = Progress.start(log, result, "stream thread CPU", "ms", 0,
              () -> ThreadCpu.cpuMillis(name -> name.contains("StreamThread")
                  && !name.startsWith("kafka-producer-network-thread")),
              null, "fan-out stream thread CPU");
          Progress brokerCpu = Progress.start(log, result, "broker CPU", "ms", 0,
              () -> (long) (Support.Cpu.now(cluster.brokerPid()).broker() * 1000), null, "broker JVM CPU");
          Progress appCpu = Progress.start(log, result, "app JVM CPU", "ms", 0,
              () -> (long) (ThreadCpu.processSeconds(ProcessHandle.current()) * 1000), null,
              "this JVM's CPU (fan-out app, load generator, measuring consumer; native threads too)");
          Progress jitCpu = Progress.start(log, result, "JIT CPU", "ms", 0,
              () -> ThreadCpu.nativeThreadMillis(ProcessHandle.current().pid(), ThreadCpu.JIT_THREAD_NAMES), null,
              "this JVM's JIT compiler threads' CPU");
          Progress brokerJitCpu = Progress.start(log, result, "broker JIT CPU", "ms", 0,
              () -> cluster.brokerPid().isPresent()
                  ? ThreadCpu.nativeThreadMillis(cluster.brokerPid().getAsLong(), ThreadCpu.JIT_THREAD_NAMES) : 0,
              null, "broker JVM's JIT compiler threads' CPU");
          Progress rocksCpu = Progress.start(log, result, "RocksDB CPU", "ms", 0,
              () -> ThreadCpu.nativeThreadMillis(ProcessHandle.current().pid(), ROCKSDB_THREADS), null,
              "RocksDB's flush and compaction threads' CPU");
          Progress machineCpu = Progress.start(log, result, "machine CPU", "ms", 0, Support::machineBusyMillis,
              null, "machine CPU busy, all processes (2,000 ms per second = both cores)");
          Progress ioWait = Progress.start(log, result, "I/O wait", "ms", 0, Support::machineIoWaitMillis, null,
              "machine CPU idle waiting for I/O");
          Progress writeback = Progress.start(log, result, "disk writeback", "MB", 0,
              () -> Support.pagesWrittenKb() / 1024, null, "page cache written to disk");
          // An entry is visible once its transaction and every earlier one open on its partition have ended.
          OpenTransactions open = new OpenTransactions(cluster.admin(), result,
              "oldest open transaction (max of 100 ms samples)")) {
        if (loadJvm) {
          runLoadJvm(cluster, result, new long[] {users, groups, large, largeSize}, messageRate,
              settleSeconds + latencySeconds, settleSeconds, measureFrom);
        } else {
          while (pacer.elapsedSeconds() < settleSeconds + latencySeconds) {
            for (long k = pacer.due(); k > 0; k--) {
              send(producer, messagesTopic, workload, errors);
            }
            pacer.pause();
          }
          producer.flush();
        }
        BenchCluster.await("fan-out committed the latency phase", Duration.ofMinutes(2),
            cluster.caughtUp(FanoutTopology.APP_NAME, Set.of(messagesTopic)));
        long want = (long) (Support.counter(runtime, ENTRIES_METRIC) - before);
        expected = want;
        BenchCluster.await("every inbox entry of the latency phase visible", Duration.ofMinutes(2), () -> {
          watcher.check();
          return watcher.seen() >= want;
        });
        // Before the watcher and the load generator's producer close: threads that ended are not listed.
        result.setup("CPU of this JVM in the latency phase, by thread",
            ThreadCpu.describe(ThreadCpu.now().since(latencyThreadsStart)));
      }
      errors.check();
      if (watcher.seen() != expected) {
        result.note("latency phase: " + watcher.seen() + " entries seen, " + expected + " expected");
      }
    } finally {
      if (inputWatcher != null) {
        inputWatcher.close();
      }
      if (appendWatcher != null) {
        appendWatcher.close();
      }
    }
    result.figure("latency: p50", latency.percentile(50), "ms");
    result.figure("latency: p99", latency.percentile(99), "ms", "<= 150", latency.percentile(99) <= 150);
    result.figure("latency: max", latency.max(), "ms");
    result.note("Latency = wall clock when a read_committed consumer of im.inbox receives the entry minus the "
        + "message's sentAt (its record timestamp, which fan-out carries to every inbox entry); one clock, one host.");
    result.note("Everything shares the machine: broker JVM, Streams app, load generator and measuring consumer.");
  }

  /**
   * Runs {@link FanoutLoad} in a JVM of its own at {@code rate} messages/s for {@code seconds}, with this run's
   * workload settings ({@code settings}: users, groups, large groups, large size); the target's measurement starts
   * {@code settleSeconds} after it starts pacing. Its output goes into the result's notes.
   */
  private static void runLoadJvm(BenchCluster cluster, Result result, long[] settings, double rate, long seconds,
      long settleSeconds, AtomicLong measureFrom) throws Exception {
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(javaBin, "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-cp",
        System.getProperty("java.class.path"), FanoutLoad.class.getName(), cluster.bootstrap(),
        cluster.registryUrl(), cluster.prefix()));
    for (long v : settings) {
      cmd.add(Long.toString(v));
    }
    cmd.addAll(List.of(Long.toString(WORKLOAD_SEED), Double.toString(rate), Long.toString(seconds)));
    Process load = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
    Thread reader = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(new InputStreamReader(load.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          lines.add(line);
          if (line.startsWith("started ")) {
            measureFrom.set(Long.parseLong(line.substring(8).trim()) + TimeUnit.SECONDS.toMillis(settleSeconds));
          }
        }
      } catch (java.io.IOException | RuntimeException e) {
        lines.add("(output not read: " + e + ")");
      }
    }, "bench-fanout-load-output");
    reader.setDaemon(true);
    reader.start();
    if (!load.waitFor(seconds + 120, TimeUnit.SECONDS)) {
      load.destroyForcibly();
      throw new IllegalStateException("the fan-out load generator did not finish: " + String.join(" | ", lines));
    }
    reader.join(10_000);
    lines.forEach(l -> result.note("load generator (own JVM): " + l));
    if (load.exitValue() != 0) {
      throw new IllegalStateException("the fan-out load generator failed (exit " + load.exitValue() + "): "
          + String.join(" | ", lines));
    }
  }

  static int inboxEntrySize(BenchCluster cluster) {
    Workload sample = new Workload(100, 10, 0, 10, 1, cluster.prefix());
    ChatMessage m = sample.next(Instant.now()).value();
    InboxEntry e = InboxEntry.newBuilder().setUserId(m.getRecipientId()).setType(InboxEntryType.MESSAGE)
        .setConversationId(m.getConversationId()).setConversationSeq(123_456).setMessageId(m.getMessageId())
        .setSenderId(m.getSenderId()).setBody(m.getBody()).setTimestamp(m.getSentAt()).build();
    byte[] value = cluster.topics().inbox().valueSerde().serializer().serialize(cluster.names().inbox(), e);
    return value.length + m.getRecipientId().length();
  }

  /** Sends the workload's next message, stamped now and keyed by its conversation; returns it. */
  static Workload.Message send(KafkaProducer<String, ChatMessage> producer, String topic, Workload workload,
      Support.SendErrors errors) {
    Instant now = Instant.now();
    Workload.Message m = workload.next(now);
    producer.send(new ProducerRecord<>(topic, null, now.toEpochMilli(), m.value().getConversationId(), m.value()),
        errors);
    return m;
  }
}
