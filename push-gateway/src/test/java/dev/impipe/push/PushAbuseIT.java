package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.push.client.DeviceClient;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One user can slow only themselves, on the device edge: real sockets against the inbox store and gateways on the
 * real broker and registry. Inbox entries are written straight to the inbox topic (the store materialises them),
 * so what is measured is the gateway alone. The first instance runs the inbox store and a gateway with a small
 * write budget; the second only a gateway with tight frame limits and a cap of two sockets per user.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class PushAbuseIT {

  /** Write budget of each socket on the first instance. */
  private static final int BUDGET = 64 * 1024;
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static PipelineRuntime first;
  private static PipelineRuntime second;
  /** A gateway whose API never answers: every send it makes stays in flight. */
  private static PipelineRuntime stalled;
  private static java.net.ServerSocket silentApi;
  private static ImTopics topics;
  private static ImConfig config;
  private static Path state;
  private static DeviceClient.Factory devices;
  private static KafkaProducer<String, InboxEntry> entries;
  private static KafkaProducer<String, byte[]> raw;
  private static final List<AutoCloseable> OPEN = new CopyOnWriteArrayList<>();
  private static final AtomicLong SEQ = new AtomicLong();

  @BeforeAll
  static void start() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("push-abuse") + ".";
    Map<String, String> envMap = new HashMap<>(TestTokens.env());
    envMap.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "4", "IM_CONVERSATION_PARTITIONS", "2",
        "IM_INBOX_QUERY_TIMEOUT", "5s", "IM_PUSH_SOCKET_WRITE_BUDGET", Integer.toString(BUDGET),
        "IM_PUSH_MAX_SOCKETS_PER_USER", "100", "IM_PUSH_PING", "60s"));
    config = ImConfig.fromEnv(envMap).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    state = TestTmpDir.newDir("push-abuse-it-");
    first = new PipelineRuntime(config.withHttpPort(0, state.resolve("first")), envMap, topics);
    first.start(List.of(new InboxStoreComponent(), new PushGatewayComponent()));
    Map<String, String> secondEnv = new HashMap<>(envMap);
    secondEnv.putAll(Map.of("IM_PUSH_API_URL", "http://127.0.0.1:" + first.http().port(),
        "IM_PUSH_MAX_SOCKETS_PER_USER", "2", "IM_PUSH_MAX_FRAME_BYTES", "1024", "IM_PUSH_FRAME_RATE", "5"));
    second = new PipelineRuntime(config.withHttpPort(0, state.resolve("second")), secondEnv, topics);
    second.start(List.of(new PushGatewayComponent()));
    silentApi = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    Thread accepting = new Thread(() -> {
      while (!silentApi.isClosed()) {
        try {
          OPEN.add(silentApi.accept()); // accepted, never answered
        } catch (java.io.IOException e) {
          return;
        }
      }
    }, "silent-api");
    accepting.setDaemon(true);
    accepting.start();
    Map<String, String> stalledEnv = new HashMap<>(envMap);
    stalledEnv.putAll(Map.of("IM_PUSH_API_URL", "http://127.0.0.1:" + silentApi.getLocalPort(),
        "IM_PUSH_MAX_INFLIGHT_SENDS", "2"));
    stalled = new PipelineRuntime(config.withHttpPort(0, state.resolve("stalled")), stalledEnv, topics);
    stalled.start(List.of(new PushGatewayComponent()));
    await().atMost(Duration.ofSeconds(120)).until(() -> first.healthy() && second.healthy() && stalled.healthy());
    devices = DeviceClient.factory();
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("acks", "all");
    entries = new KafkaProducer<>(props, new StringSerializer(), topics.inbox().valueSerde().serializer());
    raw = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
  }

  @AfterAll
  static void stop() throws Exception {
    for (AutoCloseable c : OPEN) {
      c.close();
    }
    if (devices != null) {
      devices.close();
    }
    if (entries != null) {
      entries.close();
      raw.close();
    }
    if (stalled != null) {
      stalled.close();
    }
    if (silentApi != null) {
      silentApi.close();
    }
    if (second != null) {
      second.close();
    }
    if (first != null) {
      first.close();
    }
    dev.impipe.embedded.Dirs.deleteRecursively(state);
  }

  @Test
  void unreadSocketsWithFatBacklogsHoldAtMostTheirBudgetWhileAnotherUsersPushesStayFast() throws Exception {
    // Given 2 users with 60 entries each of 20,000 control characters (each escapes to 6 bytes: ~120 kB a frame,
    // 7.2 MB a backlog: more than the kernel buffers of a loopback socket take, about 4 MB)
    int users = 2;
    int socketsPerUser = 25;
    int sockets = users * socketsPerUser;
    int backlog = 60;
    String fat = "\u0001".repeat(20_000);
    for (int u = 0; u < users; u++) {
      for (int i = 0; i < backlog; i++) {
        entries.send(new ProducerRecord<>(topics.inbox().name(), "fat" + u, entry("fat" + u, fat)));
      }
    }
    entries.flush();
    for (int u = 0; u < users; u++) {
      awaitInbox("fat" + u, backlog);
    }
    // And a well-behaved user connected, whose push latency is measured with nobody abusing
    Device calm = Device.connect(devices, base(first), TestTokens.token("calm"), "phone", true);
    OPEN.add(calm.client);
    calm.client.syncedFuture().get(30, TimeUnit.SECONDS);
    long before = pushLatency(calm, 5);
    long heapBefore = usedHeapAfterGc();

    double pushedBefore = first.metrics().get("im.push.pushes").counter().count();

    // When each user opens 25 sockets under distinct device ids and never reads from any of them
    for (int u = 0; u < users; u++) {
      for (int d = 0; d < socketsPerUser; d++) {
        OPEN.add(unreadSocket(first, "fat" + u, "d" + d));
      }
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> gauge(first, "im.push.connections") >= sockets + 1);

    // Then the gateway's unflushed bytes stay within budget x sockets (a frame larger than the budget goes alone on
    // a socket that held nothing: at most budget + one frame each)
    long frame = 6 * 20_000 + 1_024;
    long bound = sockets * (BUDGET + frame);
    // (once the kernel's buffers are full, the sockets hold frames: the budget is in use)
    await().atMost(Duration.ofSeconds(60)).until(() -> gauge(first, "im.push.write-budget-bytes") > BUDGET);
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(30))
        .until(() -> gauge(first, "im.push.write-budget-bytes") <= bound);
    // And the heap grew by at most twice that (the pages being written are held parsed) plus 64 MB of slack,
    // where keeping every unACKed frame (as the gateway did) would hold 50 x 7.2 MB = 360 MB
    long heapAfter = usedHeapAfterGc();
    long grown = heapAfter - heapBefore;
    double pushed = first.metrics().get("im.push.pushes").counter().count() - pushedBefore;
    System.out.printf("PushAbuseIT: %d unread sockets, budget %d B: unflushed %d B, heap grew %d MB, %.0f of %d "
        + "entries pushed%n", sockets, BUDGET, (long) gauge(first, "im.push.write-budget-bytes"), grown >> 20, pushed,
        sockets * backlog);
    assertThat(grown).isLessThan(2 * bound + 64L * 1024 * 1024);
    // And the backlogs stopped where the devices stopped reading: the rest is not read from the store at all
    assertThat(pushed).isLessThan(sockets * backlog);

    // And the well-behaved user's pushes stay fast meanwhile
    long during = pushLatency(calm, 10);
    System.out.printf("PushAbuseIT: calm user's worst push latency %d ms before, %d ms during%n", before, during);
    assertThat(during).isLessThan(2_000);
  }

  @Test
  void aUsersSocketBeyondTheCapClosesTheirOldestAndTheOthersStillReceive() throws Exception {
    // Given a gateway that allows 2 sockets per user, and the user's sockets a then b
    Device a = connect(second, "capped", "a");
    Device b = connect(second, "capped", "b");

    // When a third opens
    Device c = connect(second, "capped", "c");

    // Then the oldest is closed with 4012, and the two newest receive a new entry
    assertThat(a.client.closedFuture().get(30, TimeUnit.SECONDS)).isEqualTo((int) Connection.CLOSE_REPLACED);
    entries.send(new ProducerRecord<>(topics.inbox().name(), "capped", entry("capped", "after the cap"))).get();
    await().atMost(Duration.ofSeconds(30)).until(() -> b.bodies().contains("after the cap")
        && c.bodies().contains("after the cap"));
    assertThat(b.client.isOpen()).isTrue();
    assertThat(c.client.isOpen()).isTrue();
  }

  @Test
  void aUserOpeningSocketsInALoopGets429BeforeTheUpgradeOthersStillConnect() throws Exception {
    // Given a gateway allowing bursts of 10 opens a user (30 a minute after that)
    // When one user opens 10 sockets at once (each closes an older one: the cap is 2)
    for (int i = 0; i < 10; i++) {
      assertThat(upgradeHead(second, "looper", "l" + i)).startsWith("HTTP/1.1 101");
    }

    // Then the 11th is refused before the upgrade, with a Retry-After, and costs no backlog read
    String refused = upgradeHead(second, "looper", "l10");
    assertThat(refused).startsWith("HTTP/1.1 429").containsIgnoringCase("retry-after:");
    // And another user still connects and receives
    Device other = connect(second, "patient", "p");
    entries.send(new ProducerRecord<>(topics.inbox().name(), "patient", entry("patient", "still here"))).get();
    await().atMost(Duration.ofSeconds(30)).until(() -> other.bodies().contains("still here"));
  }

  @Test
  void anOversizedFrameAndAFloodOfFramesCloseTheSocketWithTheirCodes() throws Exception {
    // Given a gateway allowing frames of 1 kB, 5 a second (bursts of 10)
    Closing big = jdkSocket(second, "loud", "big");
    Closing fast = jdkSocket(second, "loud", "fast");

    // When one device sends a 2 kB frame
    big.ws.sendText("{\"type\":\"ping\",\"pad\":\"" + "x".repeat(2_048) + "\"}", true).get(10, TimeUnit.SECONDS);
    // Then it is closed with 4009
    assertThat(big.code.get(30, TimeUnit.SECONDS)).isEqualTo((int) Connection.CLOSE_FRAME_TOO_LARGE);

    // When the other sends 30 pings at once
    for (int i = 0; i < 30 && !fast.code.isDone(); i++) {
      fast.ws.sendText("{\"type\":\"ping\"}", true).get(10, TimeUnit.SECONDS);
    }
    // Then it is closed with 4029
    assertThat(fast.code.get(30, TimeUnit.SECONDS)).isEqualTo((int) Connection.CLOSE_TOO_FAST);
  }

  @Test
  void aSendBeyondTheInFlightBoundIsAnsweredWith429AndTheSocketStaysOpen() throws Exception {
    // Given a gateway allowing 2 sends in flight, whose API does not answer (so both stay in flight)
    Closing socket = jdkSocket(stalled, "chatty", "phone");

    // When the device sends three messages
    for (int i = 1; i <= 3; i++) {
      socket.ws.sendText("{\"type\":\"send\",\"to\":\"zed\",\"body\":\"hi\",\"clientMsgId\":\"c" + i + "\"}", true)
          .get(10, TimeUnit.SECONDS);
    }

    // Then the third is answered with an error frame, status 429, and the socket stays open
    await().atMost(Duration.ofSeconds(10)).until(() -> !socket.frames.isEmpty());
    com.fasterxml.jackson.databind.JsonNode error = dev.impipe.edge.http.Json.MAPPER.readTree(socket.frames.get(0));
    assertThat(error.path("type").asText()).isEqualTo("error");
    assertThat(error.path("clientMsgId").asText()).isEqualTo("c3");
    assertThat(error.path("status").asInt()).isEqualTo(429);
    assertThat(socket.code).isNotDone();
  }

  @Test
  void anUndecodableInboxRecordIsQuarantinedAndTheNextEntryIsStillPushed() throws Exception {
    // Given a device connected
    Device d = connect(first, "quarry", "phone");

    // When a record that is not an inbox entry lands in the user's inbox, then a good one
    byte[] garbage = "not an avro inbox entry".getBytes(StandardCharsets.UTF_8);
    raw.send(new ProducerRecord<>(topics.inbox().name(), "quarry", garbage)).get();
    entries.send(new ProducerRecord<>(topics.inbox().name(), "quarry", entry("quarry", "still here"))).get();

    // Then the good one is pushed
    await().atMost(Duration.ofSeconds(30)).until(() -> d.bodies().contains("still here"));
    assertThat(d.client.isOpen()).isTrue();
    // And the bad one is in the rejected topic, as it came, with the reason (the gateway's record: the inbox store
    // running beside it rejects the same bytes too, through Kafka Streams' dead-letter queue, in either order)
    ConsumerRecord<String, byte[]> rejected = rejected("quarry", PushOutput.SOURCE);
    assertThat(rejected.value()).isEqualTo(garbage);
    assertThat(header(rejected, RejectedHeaders.CODE)).isEqualTo("UNDECODABLE");
    assertThat(header(rejected, RejectedHeaders.SOURCE)).isEqualTo(PushOutput.SOURCE);
    assertThat(header(rejected, RejectedHeaders.TOPIC)).isEqualTo(topics.inbox().name());
    // And the instance is still ready (the reader goes on)
    assertThat(health(first)).isEqualTo(200);
  }

  @Test
  void aComponentsFailingReadinessCheckMakesHealthSayNotReady() throws Exception {
    // The hook the gateway's reader reports through: a reader that died makes /health 503
    AtomicBoolean alive = new AtomicBoolean(true);
    second.readiness("it-probe", alive::get);
    assertThat(health(second)).isEqualTo(200);
    alive.set(false);
    assertThat(health(second)).isEqualTo(503);
    alive.set(true);
    assertThat(health(second)).isEqualTo(200);
  }

  // ------------------------------------------------------------------------------------------------ helpers

  private static InboxEntry entry(String user, String body) {
    long n = SEQ.incrementAndGet();
    return InboxEntry.newBuilder().setUserId(user).setType(InboxEntryType.MESSAGE)
        .setConversationId(Ids.direct(user, "zed")).setConversationSeq(n).setMessageId("m" + n).setSenderId("zed")
        .setBody(body).setTimestamp(Instant.now()).build();
  }

  /** The worst of {@code n} pushes to {@code calm}: from the record's write to its arrival on the socket. */
  private static long pushLatency(Device calm, int n) throws Exception {
    long worst = 0;
    for (int i = 0; i < n; i++) {
      String body = "calm " + SEQ.get() + "-" + i;
      long t0 = System.nanoTime();
      entries.send(new ProducerRecord<>(topics.inbox().name(), "calm", entry("calm", body))).get();
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
          .until(() -> calm.bodies().contains(body));
      worst = Math.max(worst, (System.nanoTime() - t0) / 1_000_000);
    }
    return worst;
  }

  private static long usedHeapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static double gauge(PipelineRuntime instance, String name) {
    return instance.metrics().get(name).gauge().value();
  }

  /** Asks for an upgrade and returns the answer's head (status line and headers); the socket is kept open. */
  private static String upgradeHead(PipelineRuntime instance, String user, String device) throws Exception {
    Socket s = new Socket();
    OPEN.add(s);
    return upgradeHead(s, instance, user, device);
  }

  private static String upgradeHead(Socket s, PipelineRuntime instance, String user, String device) throws Exception {
    s.connect(new InetSocketAddress("127.0.0.1", instance.http().port()), 5_000);
    s.getOutputStream().write(("GET /v1/ws?device=" + device + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        + "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer " + TestTokens.token(user) + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    InputStream in = s.getInputStream();
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.append((char) b);
    }
    return head.toString();
  }

  /** A WebSocket that completes the upgrade and then never reads: the server's writes back up. */
  private static Socket unreadSocket(PipelineRuntime instance, String user, String device) throws Exception {
    Socket s = new Socket();
    s.setReceiveBufferSize(4_096);
    // Reads the answer's head only, byte by byte (nothing of the frames after it)
    assertThat(upgradeHead(s, instance, user, device)).startsWith("HTTP/1.1 101");
    return s;
  }

  /** A JDK WebSocket (frames written as given), the text frames it received and the close code it got. */
  private record Closing(WebSocket ws, List<String> frames, CompletableFuture<Integer> code) {}

  private static Closing jdkSocket(PipelineRuntime instance, String user, String device) throws Exception {
    CompletableFuture<Integer> code = new CompletableFuture<>();
    List<String> frames = new CopyOnWriteArrayList<>();
    WebSocket ws = HTTP.newWebSocketBuilder().header("Authorization", TestTokens.bearer(user))
        .buildAsync(URI.create("ws://127.0.0.1:" + instance.http().port() + "/v1/ws?device=" + device),
            new WebSocket.Listener() {
              @Override
              public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                frames.add(data.toString());
                w.request(1);
                return null;
              }

              @Override
              public CompletionStage<?> onClose(WebSocket w, int status, String reason) {
                code.complete(status);
                return null;
              }

              @Override
              public void onError(WebSocket w, Throwable error) {
                code.completeExceptionally(error);
              }
            })
        .get(30, TimeUnit.SECONDS);
    OPEN.add(() -> ws.abort());
    return new Closing(ws, frames, code);
  }

  private static Device connect(PipelineRuntime instance, String user, String device) throws Exception {
    Device d = Device.connect(devices, base(instance), TestTokens.token(user), device, true);
    OPEN.add(d.client);
    d.client.syncedFuture().get(30, TimeUnit.SECONDS);
    return d;
  }

  private static URI base(PipelineRuntime instance) {
    return URI.create("http://127.0.0.1:" + instance.http().port());
  }

  private static int health(PipelineRuntime instance) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(base(instance) + "/health")).GET().build(),
        HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  /** Waits until {@code user}'s inbox holds {@code n} entries, counted over pages (a page is cut by bytes). */
  private static void awaitInbox(String user, int n) {
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      long after = -1;
      int seen = 0;
      while (true) {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base(first) + "/v1/users/" + user
            + "/inbox?limit=1000&after=" + after)).header("Authorization", TestTokens.bearer(user)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
          return false;
        }
        com.fasterxml.jackson.databind.JsonNode page = dev.impipe.edge.http.Json.MAPPER.readTree(r.body());
        seen += page.path("entries").size();
        if (seen >= n || !page.path("hasMore").asBoolean()) {
          return seen >= n;
        }
        after = page.path("next").asLong();
      }
    });
  }

  /** The first record of the rejected topic with {@code key} that {@code source} rejected. */
  private static ConsumerRecord<String, byte[]> rejected(String key, String source) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("auto.offset.reset", "earliest");
    props.put("group.id", ItEnvironment.unique("rejected"));
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
        new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topics.rejected().name()));
      List<ConsumerRecord<String, byte[]>> found = new ArrayList<>();
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> {
          if (key.equals(r.key()) && source.equals(header(r, RejectedHeaders.SOURCE))) {
            found.add(r);
          }
        });
        return !found.isEmpty();
      });
      return found.get(0);
    }
  }

  private static String header(ConsumerRecord<String, byte[]> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }
}
