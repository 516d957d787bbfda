package dev.impipe.bench.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.report.Histogram;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.push.PushGatewayComponent;
import dev.impipe.push.client.DeviceClient;
import dev.impipe.runtime.app.PipelineRuntime;
import dev.impipe.runtime.domain.Ids;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
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
 */
public final class PushScenario implements Scenario {

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    int devices = (int) options.count("devices", 10_000, 500);
    long seconds = options.fixed("duration", options.small() ? 8 : 20);
    result.setup("devices", devices + " WebSocket devices (one user each), every entry ACKed at once");
    result.setup("load", "direct messages between random devices to im.messages: " + seconds
        + " s at full speed, then " + seconds + " s at half the pushes measured");
    PipelineRuntime runtime = cluster.run(List.of(new FanoutComponent(), new InboxStoreComponent(),
        new AckTimeoutComponent(), new PushGatewayComponent()), Map.of("IM_ACK_TIMEOUT", "15s"));
    URI base = URI.create("http://127.0.0.1:" + runtime.http().port());
    AtomicLong pushes = new AtomicLong();
    AtomicLong messagesSeen = new AtomicLong();
    Histogram latency = result.latency("send -> device receives (half rate)", "ms");
    Histogram fullLatency = result.latency("send -> device receives (full speed)", "ms");
    boolean[] halfPhase = {false};
    AtomicLong timeoutSeqs = new AtomicLong();
    Deserializer<AckTimeout> timeouts = cluster.topics().ackTimeouts().valueSerde().deserializer();
    try (DeviceClient.Factory factory = DeviceClient.factory(2);
         TopicWatcher watcher = new TopicWatcher(cluster, cluster.names().ackTimeouts(), r ->
             timeoutSeqs.addAndGet(timeouts.deserialize(r.topic(), r.headers(), r.value()).getSeqs().size()))) {
      DeviceClient.Listener listener = (client, entry, cursor) -> {
        pushes.incrementAndGet();
        client.ack(cursor);
        if ("MESSAGE".equals(entry.path("type").asText()) && !client.device().equals(sender(entry))) {
          long ms = System.currentTimeMillis() - entry.path("timestamp").asLong();
          (halfPhase[0] ? latency : fullLatency).record(Math.max(0, ms));
          messagesSeen.incrementAndGet();
        }
      };
      List<DeviceClient> clients = new ArrayList<>();
      AtomicLong connected = new AtomicLong();
      try (Progress p = Progress.start(log, result, "connecting", "devices", devices, connected::get,
          () -> "", null)) {
        for (int i = 0; i < devices; i += 200) {
          List<CompletableFuture<DeviceClient>> batch = new ArrayList<>();
          for (int k = i; k < Math.min(devices, i + 200); k++) {
            String user = "u" + k;
            batch.add(factory.connect(base, cluster.tokens().issue(user, Optional.of(user), Duration.ofHours(2)),
                user, listener));
          }
          for (CompletableFuture<DeviceClient> f : batch) {
            clients.add(f.get(60, TimeUnit.SECONDS));
            connected.incrementAndGet();
          }
        }
      }
      double held = Support.gauge(runtime, "im.push.connections");
      result.figure("connections held", held, "connections", ">= 10,000", held >= 10_000);

      SplittableRandom random = new SplittableRandom(11);
      AtomicLong sent = new AtomicLong();
      String topic = cluster.names().messages();
      double fullRate;
      try (KafkaProducer<String, ChatMessage> producer =
               cluster.producer(cluster.topics().messages().valueSerde().serializer())) {
        Support.SendErrors errors = new Support.SendErrors();
        // Full speed: as fast as the producer takes them, bounded so the backlog stays within the queues.
        long p0 = pushes.get();
        long t0 = System.nanoTime();
        try (Progress p = Progress.start(log, result, "full speed", "pushes", 0, pushes::get,
            () -> "messages sent " + sent.get() + ", connections " + (long) Support.gauge(runtime,
                "im.push.connections"), "pushes delivered")) {
          while (System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(seconds)) {
            if (sent.get() * 2 - (pushes.get() - p0) > 20_000) {
              Thread.onSpinWait();
              continue;
            }
            if (send(producer, topic, random, devices, errors)) {
              sent.incrementAndGet();
            }
          }
        }
        fullRate = (pushes.get() - p0) / ((System.nanoTime() - t0) / 1e9);
        result.figure("pushes delivered, full speed", fullRate, "pushes/s", ">= 20,000", fullRate >= 20_000);
        halfPhase[0] = true;
        Support.Pacer pacer = new Support.Pacer(fullRate / 4); // each message is two pushes (recipient, sender)
        try (Progress p = Progress.start(log, result, "half rate", "pushes", 0, pushes::get,
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
      result.figure("send -> device receives p50 (half rate)", latency.percentile(50), "ms");
      result.figure("send -> device receives p99 (half rate)", latency.percentile(99), "ms", "<= 250",
          latency.percentile(99) <= 250);
      result.figure("send -> device receives max (half rate)", latency.max(), "ms");
      result.figure("ACKs written", Support.counter(runtime, "im.push.acks"), "acks");
      // Every push was ACKed at once: wait out one ACK timeout, then no AckTimeout may exist.
      BenchCluster.await("one ACK timeout to pass", Duration.ofSeconds(40), new java.util.function.BooleanSupplier() {
        final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(17);

        @Override
        public boolean getAsBoolean() {
          return System.nanoTime() > until;
        }
      });
      result.figure("AckTimeouts for ACKed pushes", timeoutSeqs.get(), "seqs", "0", timeoutSeqs.get() == 0);
      System.gc();
      long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      result.figure("heap after GC (gateway and clients: one JVM)", Support.mbValue(heap), "MB");
      result.figure("RSS (gateway, clients, Streams apps: one JVM)", Support.mbValue(rss()), "MB");
      clients.forEach(DeviceClient::close);
    } finally {
      cluster.stop(runtime);
    }
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
    String conversation = Ids.direct(from, to);
    String id = Long.toHexString(random.nextLong());
    producer.send(new ProducerRecord<>(topic, conversation, ChatMessage.newBuilder().setMessageId("m" + id)
        .setClientMsgId("c" + id).setConversationId(conversation).setConversationType(ConversationType.DIRECT)
        .setType(MessageType.MESSAGE).setSenderId(from).setRecipientId(to).setBody("hello " + id)
        .setSentAt(Instant.now()).setAttributes(Map.of()).build()), errors);
    return true;
  }

  private static long rss() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      // not on Linux
    }
    return 0;
  }
}
