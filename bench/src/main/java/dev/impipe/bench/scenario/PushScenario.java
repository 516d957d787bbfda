package dev.impipe.bench.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.Ack;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.push.client.DeviceClient;
import dev.impipe.runtime.domain.Ids;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Device push: N WebSocket devices (one client JVM, {@link DeviceClient}) on the push gateway, direct messages
 * between them produced to {@code im.messages} at full speed, then at half the measured push rate; every device
 * ACKs every entry. Figures: connections held, pushes delivered per second, send -> device latency, ACKs, and
 * AckTimeouts (all pushes are ACKed: must be 0).
 *
 * <p>The pipeline (fan-out, inbox store, ACK wheel, gateway) runs in a JVM of its own ({@code bin/im run}, HTTP on
 * {@code IM_HTTP_PORT} or a free port), the devices in this one: each connection is a file descriptor at both ends,
 * and 10,000 of them in one process need 20,000 descriptors plus the Streams apps' files, past the usual per-process
 * limit of 20,000 here. Gateway figures come from its {@code /metrics} and {@code /proc/PID/status}.
 */
public final class PushScenario implements Scenario {

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    int devices = (int) options.count("devices", 10_000, 500);
    long seconds = options.fixed("duration", options.small() ? 8 : 20);
    long warmup = options.fixed("warmup", options.small() ? 0 : 20);
    long warmupRounds = Math.max(1, options.fixed("warmup-rounds", 8));
    // Pushes sent and not yet delivered during the full-speed phase: a backlog the pipeline can drain within the
    // final wait even when a small run shares the machine (20,000 at default scale).
    long maxPending = options.count("pending", 20_000, 1_000);
    result.setup("devices", devices + " WebSocket devices (one user each), every entry ACKed at once");
    result.setup("load", "direct messages between random devices to im.messages: "
        + (warmup > 0 ? "warm-up at full speed in rounds of " + warmup + " s until the JIT compilers of every JVM "
            + "use under " + Math.round(FanoutDrain.JIT_QUIET * 100) + "% of its CPU in a round, at most "
            + warmupRounds
            + " rounds (not measured, then one ACK timeout), " : "")
        + seconds
        + " s at full speed (at most " + maxPending + " pushes pending), then " + seconds
        + " s at half the pushes measured");
    // Register the message schema now (serializing does): under load the registry must not be on the clock of the
    // full-speed phase, whose first send would otherwise wait for it.
    cluster.topics().messages().valueSerde().serializer().serialize(cluster.names().messages(), message(
        new SplittableRandom(1), "u0", "u1"));
    long heapMb = options.fixed("heap-mb", 1024);
    if (heapMb != 1024) {
      result.setup("pipeline JVM heap (--heap-mb)", "-Xmx" + heapMb + "m");
    }
    // --stages 1: send -> device split into legs, with each JVM's CPU (PushStages); off, the bench is as without.
    boolean stagesOn = options.fixed("stages", 0) > 0;
    boolean catchUp = StreamsBacklog.catchUp(options, result);
    int n = PushGateways.count(options);
    if (stagesOn && n > 1) {
      throw new IllegalArgumentException("--stages 1 splits the latency of one gateway JVM: not with --gateways " + n);
    }
    if (n > 1) {
      result.setup("gateways (--gateways)", n + " all-in-one pipeline JVMs with IM_PUSH_READ=owned on the same "
          + "broker; each device connects to a random one and follows its redirect to the owner of its partition; "
          + "one round of " + devices / 5 + " messages through them before the load, not measured");
    }
    PushGateways runtime = PushGateways.start(cluster, n, Map.of("IM_ACK_TIMEOUT", "15s"), heapMb);
    if (stagesOn) {
      result.setup("latency legs (--stages 1)", "recorded: one more read_committed consumer of the inbox in this "
          + "JVM, two scrapes of the pipeline's /metrics per phase");
    }
    AtomicLong pushes = new AtomicLong();
    AtomicLong messagesSeen = new AtomicLong();
    LatencyRecorder latency = result.latency("send -> device receives (half rate)", "ms");
    LatencyRecorder fullLatency = result.latency("send -> device receives (full speed)", "ms");
    // 0: warm-up (not recorded), 1: full speed, 2: half rate
    int[] phase = {0};
    AtomicLong timeoutSeqs = new AtomicLong();
    LatencyRecorder emitLateness = result.latency("AckTimeout emitted after its deadline", "ms");
    FalseTimeouts falseTimeouts = new FalseTimeouts(result);
    long warmupTimeouts = 0;
    AtomicLong redirects = new AtomicLong();
    // Inbox bytes written (key + value of each committed record): what the gateways' im_push_reader_bytes_total
    // counts per record read, so their quotient is the read amplification (ReadAmplification).
    AtomicLong inboxBytes = new AtomicLong();
    Deserializer<Ack> ackValues = cluster.topics().acks().valueSerde().deserializer();
    Deserializer<AckTimeout> timeouts = cluster.topics().ackTimeouts().valueSerde().deserializer();
    try (runtime;
        PushStages stages = PushStages.startIf(stagesOn, cluster, runtime.first(), result, log);
        DeviceClient.Factory factory = DeviceClient.factory(2);
        TopicWatcher watcher = new TopicWatcher(cluster, cluster.names().ackTimeouts(), r -> {
          AckTimeout t = timeouts.deserialize(r.topic(), r.headers(), r.value());
          timeoutSeqs.addAndGet(t.getSeqs().size());
          long deadline = t.getDeadline().toEpochMilli();
          emitLateness.record(Math.max(0, r.timestamp() - deadline));
          t.getSeqs().forEach(seq -> falseTimeouts.timedOut(t.getUserId(), seq, deadline));
        });
        TopicWatcher ackWatcher = new TopicWatcher(cluster, cluster.names().acks(), r -> {
          Ack a = ackValues.deserialize(r.topic(), r.headers(), r.value());
          falseTimeouts.ackWritten(a.getUserId(), a.getSeq(), r.timestamp());
        });
        TopicWatcher inboxWatcher = new TopicWatcher(cluster, cluster.names().inbox(), r -> inboxBytes.addAndGet(
            Math.max(0, r.serializedKeySize()) + Math.max(0, r.serializedValueSize())))) {
      DeviceClient.Listener listener = new DeviceClient.Listener() {
        @Override
        public void entry(DeviceClient client, JsonNode entry, String cursor) {
          pushes.incrementAndGet();
          client.ack(cursor);
          if ("inbox".equals(entry.path("source").asText())) {
            falseTimeouts.received(client.device(), entry.path("seq").asLong());
          }
          if (phase[0] > 0 && "MESSAGE".equals(entry.path("type").asText())
              && !client.device().equals(sender(entry))) {
            long ms = System.currentTimeMillis() - entry.path("timestamp").asLong();
            (phase[0] == 2 ? latency : fullLatency).record(Math.max(0, ms));
            messagesSeen.incrementAndGet();
          }
        }

        @Override
        public void redirect(DeviceClient client, String url, String reason) {
          redirects.incrementAndGet();
        }
      };
      runtime.awaitPlacement(cluster.partitions(cluster.names().inbox()));
      SplittableRandom spread = new SplittableRandom(5);
      List<DeviceClient> clients = new ArrayList<>();
      AtomicLong connected = new AtomicLong();
      long connectStart = System.nanoTime();
      try (Progress p = Progress.start(log, result, "connecting", "devices", devices, connected::get,
          () -> "", null)) {
        for (int i = 0; i < devices; i += 200) {
          List<CompletableFuture<DeviceClient>> batch = new ArrayList<>();
          for (int k = i; k < Math.min(devices, i + 200); k++) {
            String user = "u" + k;
            String token = cluster.tokens().issue(user, Optional.of(user), Duration.ofHours(2));
            batch.add(n == 1 ? factory.connect(runtime.any(spread), token, user, listener)
                : PushGateways.connect(factory, runtime.any(spread), token, user, listener));
          }
          for (CompletableFuture<DeviceClient> f : batch) {
            clients.add(f.get(60, TimeUnit.SECONDS));
            connected.incrementAndGet();
          }
        }
      }
      double connectSeconds = (System.nanoTime() - connectStart) / 1e9;
      // Each new connection first reads its backlog through the sync API; only then do its live entries flow.
      // The load starts once every device got its "synced" frame, so the backlog reads of 10,000 connections are
      // not counted as push latency.
      AtomicLong syncedCount = new AtomicLong();
      clients.forEach(c -> c.syncedFuture().thenRun(syncedCount::incrementAndGet));
      try (Progress p = Progress.start(log, result, "backlogs read", "devices", devices, syncedCount::get,
          () -> "", null)) {
        BenchCluster.await("every device synced", Duration.ofSeconds(300), () -> syncedCount.get() >= devices);
      }
      double syncedSeconds = (System.nanoTime() - connectStart) / 1e9;
      result.figure("all devices connected", connectSeconds, "s");
      result.figure("all devices connected and synced (backlog read)", syncedSeconds, "s");
      long redirectsFollowed = redirects.get();
      double held = runtime.sum("im_push_connections", "");
      result.figure("connections held", held, "connections", ">= 10,000", held >= 10_000);

      SplittableRandom random = new SplittableRandom(11);
      AtomicLong sent = new AtomicLong();
      String topic = cluster.names().messages();
      double fullRate;
      ReadAmplification.Sample amplificationStart;
      try (KafkaProducer<String, ChatMessage> producer =
          cluster.producer(cluster.topics().messages().valueSerde().serializer())) {
        Support.SendErrors errors = new Support.SendErrors();
        if (n > 1) {
          // Not measured: a first round through every instance, whose Streams apps start their first transactions
          // and whose placement settles here (the first run with three spent the full-speed phase's first 6 s on it).
          long firstRound = sent.get() + devices / 5;
          while (sent.get() < firstRound) {
            if (send(producer, topic, random, devices, errors)) {
              sent.incrementAndGet();
            }
          }
          BenchCluster.await("first pushes delivered through every gateway (not measured)", Duration.ofSeconds(120),
              () -> pushes.get() >= sent.get() * 2);
        }
        if (warmup > 0) {
          // Warm-up, not measured: the same load in rounds until the JIT compilers of every JVM on the load's path
          // are done with its code (after one 20 s round they still took 25% of the pipeline's and 20% of the
          // broker's CPU through the measured phases: ADR 0018).
          JitShares jit = new JitShares(runtime.jvmsWith(cluster));
          List<String> rounds = new java.util.concurrent.CopyOnWriteArrayList<>();
          try (Progress p = Progress.start(log, result, "warm-up", "pushes", 0, pushes::get,
              () -> rounds.isEmpty() ? "" : "JIT " + rounds.get(rounds.size() - 1), null)) {
            for (long round = 1; round <= warmupRounds; round++) {
              Support.sendBounded(warmup, maxPending, sent, pushes,
                  () -> send(producer, topic, random, devices, errors));
              BenchCluster.await("warm-up pushes delivered", Duration.ofSeconds(120),
                  () -> pushes.get() >= sent.get() * 2);
              List<Double> shares = jit.next();
              rounds.add(jit.describe(shares));
              if (JitShares.quiet(shares)) {
                break;
              }
            }
          }
          result.setup("warm-up rounds (JIT compilers' share of each JVM's CPU per round)", rounds.size() + ": "
              + String.join("; ", rounds));
          BenchCluster.await("one ACK timeout after the warm-up", Duration.ofSeconds(60),
              deadline(Duration.ofSeconds(17)));
          warmupTimeouts = timeoutSeqs.get();
        }
        long inboxRecords = sent.get() * 2; // a direct message: one entry for the recipient, one for the sender
        BenchCluster.await("inbox records of the warm-up counted", Duration.ofSeconds(60),
            () -> inboxWatcher.seen() >= inboxRecords);
        amplificationStart = sample(runtime, inboxBytes);
        phase[0] = 1;
        // Full speed: as fast as the producer takes them, bounded so the backlog stays within the queues.
        long p0 = pushes.get();
        long t0 = System.nanoTime();
        try (PushStages.Phase legs = stages == null ? null : stages.begin("full speed");
            Progress p = Progress.start(log, result, "full speed", "pushes", 0, pushes::get,
                // Counted here: a scrape of the pipeline's /metrics costs it tens of ms of CPU (hundreds of Kafka client
                // gauges); once a second it was a third of the pipeline's Java samples (JFR).
                () -> "messages sent " + sent.get() + ", devices open " + clients.stream().filter(DeviceClient::isOpen)
                    .count(),
                "pushes delivered")) {
          Support.sendBounded(seconds, maxPending, sent, pushes, () -> send(producer, topic, random, devices, errors));
        }
        fullRate = (pushes.get() - p0) / ((System.nanoTime() - t0) / 1e9);
        result.figure("pushes delivered, full speed", fullRate, "pushes/s", ">= 20,000", fullRate >= 20_000);
        // The half-rate phase starts without the full-speed backlog (up to --pending pushes), so its latency is
        // the latency at that rate, not the time to drain the backlog.
        try (Progress p = Progress.start(log, result, "draining", "pushes", 0, pushes::get, () -> "", null)) {
          BenchCluster.await("full-speed pushes delivered", Duration.ofSeconds(120),
              () -> pushes.get() >= sent.get() * 2);
        }
        // How far behind the Streams apps are; --catch-up 1 drains that before the half-rate phase (StreamsBacklog).
        new StreamsBacklog(cluster).report(result, log, catchUp);
        phase[0] = 2;
        Support.Pacer pacer = new Support.Pacer(fullRate / 4); // each message is two pushes (recipient, sender)
        try (PushStages.Phase legs = stages == null ? null : stages.begin("half rate");
            Progress p = Progress.start(log, result, "half rate", "pushes", 0, pushes::get,
                () -> "latency p99 " + latency.percentile(99) + " ms", "pushes delivered")) {
          while (pacer.elapsedSeconds() < seconds) {
            for (long k = pacer.due(); k > 0; k--) {
              if (send(producer, topic, random, devices, errors)) {
                sent.incrementAndGet();
              }
            }
            pacer.pause();
          }
        }
        errors.check();
      }
      BenchCluster.await("all pushes delivered", Duration.ofSeconds(60), () -> pushes.get() >= sent.get() * 2);
      BenchCluster.await("every inbox record counted", Duration.ofSeconds(60),
          () -> inboxWatcher.seen() >= sent.get() * 2);
      ReadAmplification amplification = ReadAmplification.between(amplificationStart, sample(runtime, inboxBytes));
      result.figure("send -> device receives p50 (half rate)", latency.percentile(50), "ms");
      result.figure("send -> device receives p99 (half rate)", latency.percentile(99), "ms", "<= 250",
          latency.percentile(99) <= 250);
      result.figure("send -> device receives max (half rate)", latency.max(), "ms");
      result.figure("ACKs written", runtime.sum("im_push_acks_total", ""), "acks");
      result.figure("gateways", n, "instances");
      result.figure("redirects followed (devices sent to their partition's owner on connect)", redirectsFollowed,
          "redirects");
      result.figure("redirects after every device connected (partitions moved under load)",
          redirects.get() - redirectsFollowed, "redirects", "0", redirects.get() == redirectsFollowed);
      result.figure("inbox read amplification (gateways' reader bytes / inbox bytes written, measured phases; "
          + "direct messages only: no large groups in this workload)", amplification.ratio(), "x", "<= 1.2",
          amplification.ratio() <= 1.2);
      result.note("Inbox read amplification: im_push_reader_bytes_total (key + value of each record a gateway's "
          + "reader read) summed over the " + n + " gateway JVM(s), scraped before the full-speed phase and after "
          + "the half-rate phase's pushes were all delivered, divided by the key + value bytes of the inbox records "
          + "committed in between as one read_committed consumer in the bench JVM counted them (the same measure "
          + "as the gateways', unlike the log's size on disk, which adds batch headers and transaction markers): "
          + Math.round(amplification.readerBytes()) + " bytes read / " + Math.round(amplification.writtenBytes())
          + " bytes written. The push workload has direct messages only: no large group's timeline partition is "
          + "read besides an instance's own (owned mode would read those whole, so groups would raise it above 1).");
      // Every push was ACKed at once: wait out one ACK timeout, then no AckTimeout may exist.
      BenchCluster.await("one ACK timeout to pass", Duration.ofSeconds(40), deadline(Duration.ofSeconds(17)));
      if (warmup > 0) {
        result.figure("AckTimeouts for ACKed pushes (warm-up)", warmupTimeouts, "seqs");
      }
      long measuredTimeouts = timeoutSeqs.get() - warmupTimeouts;
      result.figure("AckTimeouts for ACKed pushes", measuredTimeouts, "seqs", "0", measuredTimeouts == 0);
      // Where each false timeout came from: when its device received (and at once ACKed) the seq, and when the
      // first Ack record covering it was written.
      falseTimeouts.report(result, runtime);
      result.figure("heap used (" + runtime.label() + ": gateway and Streams apps)", Support.mbValue((long) runtime.sum(
          "jvm_memory_used_bytes", "area=\"heap\"")), "MB");
      result.figure("RSS (" + runtime.label() + ": gateway, Streams apps)", Support.mbValue(runtime.rss()), "MB");
      System.gc();
      long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      result.figure("heap after GC (client JVM: " + devices + " devices)", Support.mbValue(heap), "MB");
      result.figure("RSS (client JVM)", Support.mbValue(PipelineJvm.rss(ProcessHandle.current().pid())), "MB");
      clients.forEach(DeviceClient::close);
    }
  }

  /** The gateways' reader bytes and the inbox bytes written, now. */
  private static ReadAmplification.Sample sample(PushGateways gateways, AtomicLong inboxBytes) {
    return new ReadAmplification.Sample(gateways.each("im_push_reader_bytes_total", ""), inboxBytes.get());
  }

  /** True once {@code wait} has passed from now. */
  private static java.util.function.BooleanSupplier deadline(Duration wait) {
    long until = System.nanoTime() + wait.toNanos();
    return () -> System.nanoTime() > until;
  }

  private static String sender(JsonNode entry) {
    return entry.path("senderId").asText();
  }

  private static boolean send(KafkaProducer<String, ChatMessage> producer, String topic, SplittableRandom random,
      int devices, Support.SendErrors errors) {
    String from = "u" + random.nextInt(devices);
    String to = "u" + random.nextInt(devices);
    if (from.equals(to)) {
      return false;
    }
    producer.send(new ProducerRecord<>(topic, Ids.direct(from, to), message(random, from, to)), errors);
    return true;
  }

  private static ChatMessage message(SplittableRandom random, String from, String to) {
    String conversation = Ids.direct(from, to);
    String id = Long.toHexString(random.nextLong());
    return ChatMessage.newBuilder().setMessageId("m" + id).setClientMsgId("c" + id).setConversationId(conversation)
        .setConversationType(ConversationType.DIRECT).setType(MessageType.MESSAGE).setSenderId(from)
        .setRecipientId(to).setBody("hello " + id).setSentAt(Instant.now()).setAttributes(Map.of()).build();
  }
}
