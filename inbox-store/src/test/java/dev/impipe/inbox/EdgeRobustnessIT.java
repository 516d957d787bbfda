package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.InboxEntry;
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
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A busy or hostile crowd does not stall the server: 500 clients trickling their request heads or bodies and 500
 * pending {@code minSeq} waits leave {@code /health} prompt (median under 100 ms) and a normal sync answering; a 100 MB
 * body is refused with 413 before it is sent. On the real broker, one inbox-store instance.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class EdgeRobustnessIT {

  private static final int SLOW_CLIENTS = 500;
  private static final int PENDING_WAITS = 500;

  private static PipelineRuntime runtime;
  private static ImTopics topics;
  private static Path state;
  private static long lastSeq;

  @BeforeAll
  static void start() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("edge") + ".";
    Map<String, String> vars = new HashMap<>(TestTokens.env());
    vars.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "2", "IM_CONVERSATION_PARTITIONS", "2",
        "IM_INBOX_QUERY_TIMEOUT", "60s", "IM_HTTP_REQUEST_TIMEOUT", "90s",
        // the 500 waits below are one user's: what 500 pending waits cost, not the per-user bound, is measured here
        "IM_SYNC_MAX_WAITING_PER_USER", "1000"));
    ImConfig config = ImConfig.fromEnv(vars).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    state = TestTmpDir.newDir("edge-it-");
    runtime = new PipelineRuntime(config.withHttpPort(0, state), vars, topics);
    runtime.start(List.of(new InboxStoreComponent()));
    await().atMost(Duration.ofSeconds(90)).until(runtime::healthy);
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("enable.idempotence", true);
    try (KafkaProducer<String, InboxEntry> producer = new KafkaProducer<>(props,
        topics.inbox().keySerde().serializer(), topics.inbox().valueSerde().serializer())) {
      for (int i = 0; i < 3; i++) {
        lastSeq = producer.send(new ProducerRecord<>(topics.inbox().name(), "alice",
            TestData.message("alice", "d:alice:bob", "m" + i, Instant.now()))).get(30, TimeUnit.SECONDS).offset();
      }
    }
  }

  @AfterAll
  static void stop() {
    if (runtime != null) {
      runtime.close();
    }
  }

  @Test
  void slowClientsAndPendingWaitsDoNotDelayHealthNorANormalSync() throws Exception {
    int port = runtime.http().port();
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    // The probe (a client of its own, as a liveness probe is) warms up before the crowd arrives: its connection
    // set-up and the JIT are not what is measured.
    HttpClient probe = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    for (int i = 0; i < 20; i++) {
      probe.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).build(),
          HttpResponse.BodyHandlers.discarding());
    }
    List<Socket> slow = new ArrayList<>();
    List<CompletableFuture<HttpResponse<String>>> waits = new ArrayList<>();
    try {
      // Given 500 connections that send half a request (250 stop mid-head, 250 mid-body) and never finish
      for (int i = 0; i < SLOW_CLIENTS; i++) {
        Socket socket = new Socket("127.0.0.1", port);
        OutputStream out = socket.getOutputStream();
        String head = i % 2 == 0 ? "GET /v1/users/alice/inbox HTTP/1.1\r\nHost: x\r\nX-Slow: "
            : "PUT /v1/users/alice/devices/d/cursor HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + TestTokens.token("alice") + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"se";
        out.write(head.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        slow.add(socket);
      }
      // and 500 sync requests waiting for a seq the inbox will not reach while the test runs
      for (int i = 0; i < PENDING_WAITS; i++) {
        waits.add(client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
            + "/v1/users/alice/devices/w" + i + "/sync?minSeq=9000000000"))
            .header("Authorization", "Bearer " + TestTokens.token("alice")).build(),
            HttpResponse.BodyHandlers.ofString()));
      }
      // (measured once they are pending: every wait has arrived and no request is queued for a worker; the arrival
      // of 500 requests in the same instant is a burst of its own, not what a pending wait costs)
      await().atMost(Duration.ofSeconds(60)).until(() -> runtime.http().openConnections() >= PENDING_WAITS
          && runtime.http().queued() == 0 && pendingAt(runtime) >= PENDING_WAITS);

      // When /health is asked ten times by the probe, and a normal sync once
      List<Long> healthMs = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        long t0 = System.nanoTime();
        HttpResponse<String> health = probe.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
            + "/health")).build(), HttpResponse.BodyHandlers.ofString());
        healthMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        assertThat(health.statusCode()).isEqualTo(200);
      }
      HttpResponse<String> sync = probe.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/v1/users/alice/devices/phone/sync?limit=50")).header("Authorization", "Bearer "
              + TestTokens.token("alice"))
          .build(), HttpResponse.BodyHandlers.ofString());

      // Then health answered promptly every time (median under 100 ms; none over a second, where a pool shared with
      // the pending waits took 5.5 s; the build runs two modules at once, so one answer may wait for a core) and
      // the sync has alice's three entries
      assertThat(healthMs.stream().sorted().toList().get(healthMs.size() / 2)).isLessThan(100);
      assertThat(healthMs).allSatisfy(ms -> assertThat(ms).isLessThan(1_000));
      assertThat(sync.statusCode()).isEqualTo(200);
      JsonNode page = Json.MAPPER.readTree(sync.body());
      assertThat(page.get("entries")).hasSize(3);
      assertThat(page.get("next").asLong()).isEqualTo(lastSeq);
      // and every wait is still pending (none was dropped or answered wrongly to make room)
      assertThat(waits).noneMatch(CompletableFuture::isDone);
    } finally {
      for (Socket socket : slow) {
        closeQuietly(socket);
      }
      waits.forEach(w -> w.cancel(true));
    }
  }

  @Test
  void aHundredMegabyteBodyIsRefusedWith413BeforeItIsSent() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", runtime.http().port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(("POST /v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
          + TestTokens.token("alice") + "\r\nContent-Type: application/json\r\nContent-Length: "
          + (100L << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      // Nothing of the body was sent: the answer comes from the declared length alone.
      String status = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      assertThat(status).isEqualTo("HTTP/1.1 413");
    }
  }

  /** Sync requests started and not yet answered, from the server's own request timer. */
  private static long pendingAt(PipelineRuntime instance) {
    return (long) instance.metrics().find("im.inbox.pending").gauges().stream()
        .mapToDouble(io.micrometer.core.instrument.Gauge::value).sum();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing a test socket
    }
  }
}
