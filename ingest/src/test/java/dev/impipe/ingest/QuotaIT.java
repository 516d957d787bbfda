package dev.impipe.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.ChatMessage;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.edge.http.Json;
import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Per-user quotas on the real broker, with the default limits (20 sends per second, bursts of 40): one user floods
 * sends from 8 connections and is answered {@code 429} with {@code Retry-After}, getting no more through than the
 * quota allows; a second user sending through the same instance at the same time gets every send accepted, each
 * within an explicit latency bound; exactly the accepted sends are in {@code im.messages}.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class QuotaIT {

  private static final int FLOODERS = 8;
  /** Upper bound on the flood, so the test stays bounded whatever happens. */
  private static final int MAX_FLOOD_REQUESTS = 20_000;
  private static final int WELL_BEHAVED_SENDS = 30;
  /** The second user's latency bound: each send, measured while the flood runs. */
  private static final Duration LATENCY_BOUND = Duration.ofSeconds(1);

  private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @Test
  void aFloodingUserGets429sWhileAnotherUsersSendsAllPassQuickly() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("quota") + ".";
    Map<String, String> vars = TestTokens.env(Map.of("IM_TOPIC_PREFIX", prefix, "IM_CONVERSATION_PARTITIONS", "2",
        "IM_USER_PARTITIONS", "2"));
    ImConfig config = ImConfig.fromEnv(vars).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, SchemaRegistryClients.forUrl(env.schemaRegistryUrl()));
    PipelineRuntime runtime = new PipelineRuntime(config.withHttpPort(0, TestTmpDir.newDir("quota-it")),
        vars, topics);
    ExecutorService flooders = Executors.newFixedThreadPool(FLOODERS);
    try (runtime) {
      runtime.start(List.of(new IngestComponent()));
      await().atMost(Duration.ofSeconds(60)).until(runtime::healthy);
      URI messages = URI.create("http://127.0.0.1:" + runtime.http().port() + "/v1/messages");
      // Given bob's connection is warm (its set-up is not what is measured)
      assertThat(send(messages, "bob", "warm-up").statusCode()).isEqualTo(202);
      // (for the report: a third user's send latency without any flood)
      List<Long> baselineMs = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        long start = System.nanoTime();
        assertThat(send(messages, "bea", "quiet-" + i).statusCode()).isEqualTo(202);
        baselineMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
      }

      // When mallory floods from 8 connections
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger issued = new AtomicInteger();
      ConcurrentLinkedQueue<HttpResponse<String>> floodAnswers = new ConcurrentLinkedQueue<>();
      long floodStart = System.nanoTime();
      for (int t = 0; t < FLOODERS; t++) {
        flooders.execute(() -> {
          int n;
          while (!stop.get() && (n = issued.incrementAndGet()) <= MAX_FLOOD_REQUESTS) {
            try {
              floodAnswers.add(send(messages, "mallory", "flood-" + n));
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          }
        });
      }
      // (the flood is in full swing once mallory has been refused)
      await().atMost(Duration.ofSeconds(30)).until(() -> floodAnswers.stream().anyMatch(r -> r.statusCode() == 429));
      // And bob sends 30 messages, one after the other, meanwhile
      List<Long> latenciesMs = new ArrayList<>();
      List<Integer> bobStatuses = new ArrayList<>();
      for (int i = 0; i < WELL_BEHAVED_SENDS; i++) {
        long start = System.nanoTime();
        HttpResponse<String> answer = send(messages, "bob", "bob-" + i);
        latenciesMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        bobStatuses.add(answer.statusCode());
      }
      boolean floodStillRunning = !stop.get() && issued.get() < MAX_FLOOD_REQUESTS;
      stop.set(true);
      flooders.shutdown();
      assertThat(flooders.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
      double floodSeconds = (System.nanoTime() - floodStart) / 1e9;

      // Then every send of bob's was accepted within the bound, while the flood was still going on
      assertThat(floodStillRunning).as("the flood lasted as long as bob's sends").isTrue();
      assertThat(bobStatuses).containsOnly(202);
      long worstMs = latenciesMs.stream().mapToLong(Long::longValue).max().orElseThrow();
      System.out.printf("QuotaIT: without a flood: median %d ms, worst %d ms; bob's %d sends during the flood: "
          + "median %d ms, worst %d ms%n", baselineMs.stream().sorted().toList().get(5),
          baselineMs.stream().mapToLong(Long::longValue).max().orElseThrow(), WELL_BEHAVED_SENDS,
          latenciesMs.stream().sorted().toList().get(WELL_BEHAVED_SENDS / 2), worstMs);
      assertThat(worstMs).isLessThan(LATENCY_BOUND.toMillis());
      // And mallory got 429s with Retry-After (whole seconds) and a reason, and no more through than the quota
      List<HttpResponse<String>> refused = floodAnswers.stream().filter(r -> r.statusCode() == 429).toList();
      long accepted = floodAnswers.stream().filter(r -> r.statusCode() == 202).count();
      System.out.printf("QuotaIT: mallory's flood: %d requests in %.1f s, %d accepted, %d refused with 429%n",
          floodAnswers.size(), floodSeconds, accepted, refused.size());
      assertThat(floodAnswers).allMatch(r -> r.statusCode() == 202 || r.statusCode() == 429);
      for (HttpResponse<String> r : refused) {
        assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(Json.MAPPER.readTree(r.body()).get("error").asText())
            .startsWith("too many sends: at most 20 per second (bursts of 40) per user");
      }
      assertThat(accepted).isLessThanOrEqualTo(40 + (long) Math.ceil(20 * floodSeconds));
      assertThat(refused).isNotEmpty();
      // And the topic holds exactly the accepted sends: 1 + 30 of bob's, bea's 10, mallory's accepted ones, no refused
      Map<String, Integer> published = publishedBySender(config, topics, 41 + accepted);
      assertThat(published).containsOnly(Map.entry("bob", 31), Map.entry("bea", 10),
          Map.entry("mallory", (int) accepted));
    } finally {
      flooders.shutdownNow();
    }
  }

  private HttpResponse<String> send(URI messages, String user, String clientMsgId) throws Exception {
    String body = "{\"to\":\"" + (user.equals("bob") ? "alice" : "carol") + "\",\"body\":\"hi\",\"clientMsgId\":\""
        + clientMsgId + "\"}";
    return client.send(HttpRequest.newBuilder(messages).header("Authorization", TestTokens.bearer(user))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Messages in {@code im.messages} per sender, once {@code expected} have arrived (and 2 s more for any extra). */
  private static Map<String, Integer> publishedBySender(ImConfig config, ImTopics topics, long expected) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("auto.offset.reset", "earliest");
    props.put("group.id", ItEnvironment.unique("quota-reader"));
    Map<String, Integer> bySender = new HashMap<>();
    try (KafkaConsumer<String, ChatMessage> consumer = new KafkaConsumer<>(props,
        topics.messages().keySerde().deserializer(), topics.messages().valueSerde().deserializer())) {
      consumer.subscribe(Set.of(topics.messages().name()));
      AtomicInteger seen = new AtomicInteger();
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> {
          bySender.merge(r.value().getSenderId(), 1, Integer::sum);
          seen.incrementAndGet();
        });
        return seen.get() >= expected;
      });
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (System.nanoTime() < until) {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> bySender.merge(r.value().getSenderId(), 1,
            Integer::sum));
      }
    }
    return bySender;
  }
}
