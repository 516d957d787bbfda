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
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.runtime.domain.Ids;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The conversation list of one user with many conversations: one direct message from each of {@code
 * conversations} senders to {@code u0}, then {@code GET /v1/users/u0/conversations?limit=50} in a closed loop (the
 * peak rate) and in an open loop at half of it, where the target (p99 <= 10 ms) is checked; each open-loop request
 * is timed from when it was due. The load comes from {@link SyncLoad} in a JVM of its own (as in the sync benchmark),
 * on {@code --concurrency} keep-alive connections. Then, unless {@code --cost 0}, what the list costs the write
 * path: {@link ConversationsCost}, the fan-out workload drained with the list on and off in the same command.
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
        + " connections in a closed loop for " + seconds + " s after a 2 s warm-up, then " + seconds
        + " s open loop at half that rate (load generator in its own JVM)");
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

    // The load generator is the sync benchmark's (SyncLoad, in a JVM of its own: plain keep-alive sockets), on the
    // list's path: in this JVM java.net.http costs more CPU than the requests it times.
    String token = "Bearer " + cluster.tokens().issue(USER, Duration.ofHours(2));
    Path dir = Files.createTempDirectory("im-bench-conversations");
    try {
      Path tokens = dir.resolve("tokens.txt");
      Files.write(tokens, List.of(token), StandardCharsets.UTF_8);
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      List<String> cmd = List.of(java, "-Xms64m", "-Xmx64m", "-XX:+UseSerialGC", "-cp",
          System.getProperty("java.class.path"), SyncLoad.class.getName(), "127.0.0.1",
          Integer.toString(runtime.http().port()), tokens.toString(), Integer.toString(limit), dir.toString(), "2",
          Long.toString(seconds), Integer.toString(concurrency), Integer.toString(concurrency), "0",
          "/v1/users/{user}/conversations?limit=" + limit);
      Path loadLog = dir.resolve("load.log");
      Process load = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(loadLog.toFile()).start();
      if (!load.waitFor(2 * seconds + 120, TimeUnit.SECONDS) || load.exitValue() != 0) {
        load.destroyForcibly();
        throw new IllegalStateException("the load generator failed; its log: " + Files.readString(loadLog));
      }
      LatencyRecorder peak = result.latency("conversation list (closed loop, saturated)", "us");
      long[] closed = SyncScenario.readPhase(dir.resolve("closed.txt"), peak);
      double rps = closed[0] / (closed[3] / 1e9);
      result.figure("conversation list requests (closed loop)", rps, "requests/s");
      result.figure("conversation list p99 (closed loop, saturated)", peak.percentile(99) / 1000.0, "ms");
      LatencyRecorder half = result.latency("conversation list at half the saturated rate (open loop)", "us");
      long[] open = SyncScenario.readPhase(dir.resolve("open.txt"), half);
      double p99 = half.percentile(99) / 1000.0;
      result.figure("conversation list p99 at half the saturated rate", p99, "ms", "<= 10", p99 <= 10);
      long failed = closed[1] + open[1];
      result.figure("conversation list: failed requests (non-200)", failed, "requests", "0", failed == 0);
    } finally {
      try (var files = Files.list(dir)) {
        for (Path f : (Iterable<Path>) files::iterator) {
          Files.deleteIfExists(f);
        }
      }
      Files.deleteIfExists(dir);
    }
    cluster.stop(runtime);
    if (options.fixed("cost", 1) > 0) {
      ConversationsCost.measure(options, cluster, result, log);
    } else {
      result.note("Not measured (--cost 0): the fan-out ratio to the ceiling with the list on and off.");
    }
  }
}
