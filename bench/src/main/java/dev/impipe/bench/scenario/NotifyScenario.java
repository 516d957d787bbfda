package dev.impipe.bench.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.notify.NotifyComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.runtime.domain.Ids;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.KafkaStreams;

/**
 * Notifications at full speed, then at half that rate: N registered devices that never receive anything (webhook
 * provider, a local receiver answering 200), one inbox message per device and conversation. Figures: decisions/s
 * (read_committed, from a backlog decided at once), sent/s (the provider's answers), entry -> provider answer latency
 * at half the peak (target p99 <= IM_NOTIFY_AFTER + 1 s); then what deciding costs the fan-out ({@link NotifyCost}).
 */
public final class NotifyScenario implements Scenario {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    int devices = (int) options.count("devices", 20_000, 1_000);
    long messages = options.count("backlog", 100_000, 5_000);
    long seconds = options.fixed("duration", options.small() ? 8 : 20);
    long afterMs = 2_000;
    result.setup("devices", devices + " registered (provider webhook to a local receiver answering 200), none "
        + "connected");
    result.setup("messages (full-speed phase)", messages + ", each to a new device x conversation");
    result.setup("IM_NOTIFY_AFTER", afterMs + " ms");
    result.setup("latency phase", seconds + " s at half the full-speed rate");

    String inbox = cluster.names().inbox();
    int size = FanoutScenario.inboxEntrySize(cluster);
    double ceiling = Ceiling.measure(cluster, result, cluster.partitions(inbox), size,
        Ceiling.records(options, size));

    Map<String, Long> writtenAt = new ConcurrentHashMap<>();
    AtomicLong received = new AtomicLong();
    LatencyRecorder latency = result.latency("entry -> provider (webhook POST received), half rate", "ms");
    AtomicLong[] measuring = {null};
    ExecutorService pool = Executors.newFixedThreadPool(4);
    HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 512);
    receiver.setExecutor(pool);
    receiver.createContext("/hook", exchange -> {
      long now = System.currentTimeMillis();
      JsonNode body = JSON.readTree(exchange.getRequestBody().readAllBytes());
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
      received.incrementAndGet();
      Long at = writtenAt.remove(body.path("userId").asText() + "|" + body.path("conversationId").asText());
      if (at != null && measuring[0] != null) {
        latency.record(now - at);
        measuring[0].incrementAndGet();
      }
    });
    receiver.start();
    try {
      PipelineRuntime runtime = cluster.run(List.of(new NotifyComponent()), Map.of(
          "IM_NOTIFY_AFTER", afterMs + "ms", "IM_NOTIFY_COALESCE", "0",
          "IM_NOTIFY_WEBHOOK_URL", "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook",
          "IM_NOTIFY_WEBHOOK_SECRET", "bench-secret"));
      KafkaStreams app = runtime.streams().get(NotifyComponent.NAME);
      String registrations = cluster.names().pushRegistrations();
      try (KafkaProducer<String, PushRegistration> p = cluster.producer(
          cluster.topics().pushRegistrations().valueSerde().serializer())) {
        for (int d = 0; d < devices; d++) {
          p.send(new ProducerRecord<>(registrations, user(d), PushRegistration.newBuilder().setUserId(user(d))
              .setDeviceId("phone").setRegistrationId("r" + d).setProvider(PushProvider.WEBHOOK).setRemoved(false)
              .setAt(Instant.now()).build()));
        }
      }
      BenchCluster.await("the decider has read every registration", Duration.ofMinutes(2),
          cluster.caughtUp(NotifyComponent.NAME, Set.of(registrations)));

      // Full speed: the backlog is written while the decider is paused, all of it due by the time it resumes.
      app.pause();
      Support.SendErrors errors = new Support.SendErrors();
      try (KafkaProducer<String, InboxEntry> p = cluster.producer(cluster.topics().inbox().valueSerde()
          .serializer())) {
        Instant at = Instant.now().minusMillis(afterMs);
        for (long i = 0; i < messages; i++) {
          String u = user((int) (i % devices));
          p.send(new ProducerRecord<>(inbox, u, message(u, "s" + (i / devices), i, at)), errors);
        }
        p.flush();
      }
      errors.check();
      String notifications = cluster.names().notifications();
      AtomicLong decided = new AtomicLong();
      long before = received.get();
      long decideStart;
      long decideEnd;
      long sentEnd;
      try (TopicWatcher watcher = new TopicWatcher(cluster, notifications, r -> decided.incrementAndGet());
          Progress progress = Progress.start(log, result, "decisions", "records", messages, decided::get,
              () -> "sent " + (received.get() - before), "decided")) {
        decideStart = System.nanoTime();
        app.resume();
        BenchCluster.await("every message decided", Duration.ofMinutes(10), () -> decided.get() >= messages);
        decideEnd = System.nanoTime();
        BenchCluster.await("every notification sent", Duration.ofMinutes(10),
            () -> received.get() - before >= messages);
        sentEnd = System.nanoTime();
      }
      double decisionsPerSecond = messages / ((decideEnd - decideStart) / 1e9);
      double sentPerSecond = messages / ((sentEnd - decideStart) / 1e9);
      result.figure("decisions/s (read_committed)", decisionsPerSecond, "records/s");
      result.figure("sent/s (provider answered)", sentPerSecond, "requests/s");
      result.figure("decisions/s / ceiling", decisionsPerSecond / ceiling, "ratio");

      // Half rate: each message written now, its notification due IM_NOTIFY_AFTER later.
      double rate = Math.min(decisionsPerSecond, sentPerSecond) / 2;
      measuring[0] = new AtomicLong();
      long sent = 0;
      try (KafkaProducer<String, InboxEntry> p = cluster.producer(cluster.topics().inbox().valueSerde()
          .serializer())) {
        Support.Pacer pacer = new Support.Pacer(rate);
        long i = 0;
        while (pacer.elapsedSeconds() < seconds) {
          for (long k = pacer.due(); k > 0; k--, i++) {
            String u = user((int) (i % devices));
            String sender = "h" + (i / devices);
            Instant now = Instant.now();
            writtenAt.put(u + "|" + Ids.direct(sender, u), now.toEpochMilli());
            p.send(new ProducerRecord<>(inbox, u, message(u, sender, i, now)), errors);
            sent++;
          }
          pacer.pause();
        }
        p.flush();
      }
      errors.check();
      long expected = sent;
      BenchCluster.await("every half-rate notification received", Duration.ofMinutes(5),
          () -> measuring[0].get() >= expected);
      result.figure("latency phase rate", rate, "messages/s");
      result.figure("entry -> provider p50", latency.percentile(50), "ms");
      result.figure("entry -> provider p99", latency.percentile(99), "ms", "<= " + (afterMs + 1_000) + " ms",
          latency.percentile(99) <= afterMs + 1_000);
      cluster.stop(runtime);
    } finally {
      receiver.stop(0);
      pool.shutdownNow();
    }
    if (options.fixed("cost", 1) > 0) {
      OnOffCost.measure(options, cluster, result, log, new NotifyCost(), ceiling);
    }
  }

  private static String user(int d) {
    return "n" + d;
  }

  private static InboxEntry message(String user, String sender, long i, Instant at) {
    return InboxEntry.newBuilder().setUserId(user).setType(InboxEntryType.MESSAGE)
        .setConversationId(Ids.direct(sender, user)).setConversationSeq(i).setMessageId("m" + i)
        .setSenderId(sender).setBody("a notification benchmark message of sixty-four characters ....")
        .setTimestamp(at).build();
  }
}
