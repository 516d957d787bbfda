package dev.impipe.bench.scenario;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.Result;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.runtime.app.PipelineRuntime;
import dev.impipe.runtime.domain.Ids;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The conversation list of one user with many conversations: one direct message from each of {@code
 * conversations} senders to {@code u0}, then {@code GET /v1/users/u0/conversations?limit=50} in a closed loop (the
 * peak rate) and in an open loop at half of it, where the target (p99 <= 10 ms) is checked; each open-loop request
 * is timed from when it was due. The load runs on threads of this JVM (java.net.http, keep-alive).
 */
public final class ConversationsScenario implements Scenario {

  private static final String USER = "u0";

  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    int conversations = (int) options.fixed("conversations", 1_000);
    int concurrency = (int) options.fixed("concurrency", 4);
    long seconds = options.fixed("duration", options.small() ? 5 : 20);
    int limit = (int) options.fixed("limit", 50);
    result.setup("conversations of the user", conversations);
    result.setup("requests", "GET /v1/users/" + USER + "/conversations?limit=" + limit + ", " + concurrency
        + " threads in a closed loop for " + seconds + " s after a 2 s warm-up, then " + seconds
        + " s open loop at half that rate");
    PipelineRuntime runtime = cluster.run(List.of(new FanoutComponent(), new InboxStoreComponent()), Map.of());
    Support.SendErrors errors = new Support.SendErrors();
    try (KafkaProducer<String, ChatMessage> producer =
        cluster.producer(cluster.topics().messages().valueSerde().serializer())) {
      for (int i = 1; i <= conversations; i++) {
        String sender = "s" + i;
        String chat = Ids.direct(sender, USER);
        producer.send(new ProducerRecord<>(cluster.names().messages(), chat, ChatMessage.newBuilder()
            .setMessageId("m" + i).setClientMsgId("c" + i).setConversationId(chat)
            .setConversationType(ConversationType.DIRECT).setType(MessageType.MESSAGE).setSenderId(sender)
            .setRecipientId(USER).setBody("hello " + i).setSentAt(Instant.now()).setAttributes(Map.of()).build()),
            errors);
      }
      producer.flush();
    }
    errors.check();
    BenchCluster.await("fan-out done", Duration.ofMinutes(4),
        cluster.caughtUp(FanoutTopology.APP_NAME, Set.of(cluster.names().messages())));
    BenchCluster.await("inbox store caught up", Duration.ofMinutes(4), cluster.caughtUp(InboxStoreTopology.APP_NAME,
        Set.of(cluster.names().inbox())));
    cluster.step("conversations filled and materialised");

    URI uri = URI.create("http://127.0.0.1:" + runtime.http().port() + "/v1/users/" + USER + "/conversations?limit="
        + limit);
    String token = "Bearer " + cluster.tokens().issue(USER, Duration.ofHours(2));
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpRequest request = HttpRequest.newBuilder(uri).header("Authorization", token).timeout(Duration.ofSeconds(10))
        .build();
    AtomicLong failed = new AtomicLong();
    closedLoop(client, request, concurrency, 2, null, failed);
    LatencyRecorder peak = result.latency("conversation list (closed loop, saturated)", "us");
    long done = closedLoop(client, request, concurrency, seconds, peak, failed);
    double rps = done / (double) seconds;
    result.figure("conversation list requests (closed loop)", rps, "requests/s");
    result.figure("conversation list p99 (closed loop, saturated)", peak.percentile(99) / 1000.0, "ms");
    LatencyRecorder half = result.latency("conversation list at half the saturated rate (open loop)", "us");
    openLoop(client, request, concurrency, seconds, rps / 2, half, failed);
    double p99 = half.percentile(99) / 1000.0;
    result.figure("conversation list p99 at half the saturated rate", p99, "ms", "<= 10", p99 <= 10);
    result.figure("conversation list: failed requests (non-200)", failed.get(), "requests", "0", failed.get() == 0);
    result.note("Not measured here: the fan-out ratio to the ceiling with and without the conversation state "
        + "(run bench fanout on both builds).");
  }

  /** {@code threads} threads sending back to back for {@code seconds}; returns the requests completed. */
  private static long closedLoop(HttpClient client, HttpRequest request, int threads, long seconds,
      LatencyRecorder latency, AtomicLong failed) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
    AtomicLong count = new AtomicLong();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      workers.add(started(() -> {
        while (System.nanoTime() < end) {
          long start = System.nanoTime();
          send(client, request, failed);
          if (latency != null) {
            latency.record((System.nanoTime() - start) / 1_000);
          }
          count.incrementAndGet();
        }
      }));
    }
    for (Thread w : workers) {
      w.join();
    }
    return count.get();
  }

  /** {@code rate} requests/s spread over {@code threads} threads, each timed from when it was due. */
  private static void openLoop(HttpClient client, HttpRequest request, int threads, long seconds, double rate,
      LatencyRecorder latency, AtomicLong failed) throws InterruptedException {
    long interval = (long) (threads * 1e9 / Math.max(1, rate));
    long start = System.nanoTime();
    long end = start + Duration.ofSeconds(seconds).toNanos();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      long offset = interval * t / threads;
      workers.add(started(() -> {
        for (long due = start + offset; due < end; due += interval) {
          long wait = due - System.nanoTime();
          if (wait > 0) {
            LockSupport.parkNanos(wait); // pacing the load, not waiting for the system to settle
          }
          send(client, request, failed);
          latency.record((System.nanoTime() - due) / 1_000);
        }
      }));
    }
    for (Thread w : workers) {
      w.join();
    }
  }

  private static Thread started(Runnable body) {
    Thread t = new Thread(body, "conversations-load");
    t.start();
    return t;
  }

  private static void send(HttpClient client, HttpRequest request, AtomicLong failed) {
    try {
      HttpResponse<byte[]> response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
      if (response.statusCode() != 200) {
        failed.incrementAndGet();
      }
    } catch (java.io.IOException e) {
      failed.incrementAndGet();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failed.incrementAndGet();
    }
  }
}
