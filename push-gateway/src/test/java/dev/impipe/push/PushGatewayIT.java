package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.avro.AckTimeout;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.ingest.IngestComponent;
import dev.impipe.push.client.DeviceClient;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Devices on real WebSockets against the whole pipeline on the real broker and registry: the first instance runs
 * ingest, fan-out, inbox store, ACK wheel (5 s timeout) and a gateway; the second only a gateway (its backlog reads
 * and sends go to the first's API) with a small per-connection queue, for the slow-device case. Groups of three
 * or more members are large (read diffusion: their messages live only in the group's timeline {@code #groupId}).
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class PushGatewayIT {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static PipelineRuntime first;
  private static PipelineRuntime second;
  private static ImTopics topics;
  private static ImConfig config;
  private static Path state;
  private static DeviceClient.Factory devices;
  private static final List<DeviceClient> OPEN = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("push") + ".";
    Map<String, String> envMap = new HashMap<>(TestTokens.env());
    envMap.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "4", "IM_CONVERSATION_PARTITIONS", "2",
        "IM_ACK_TICK", "200ms", "IM_ACK_TIMEOUT", "5s", "IM_INBOX_QUERY_TIMEOUT", "5s",
        "IM_LARGE_GROUP_THRESHOLD", "2"));
    config = ImConfig.fromEnv(envMap).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    state = TestTmpDir.newDir("push-it-");
    first = new PipelineRuntime(config.withHttpPort(0, state.resolve("first")), envMap, topics);
    first.start(List.of(new IngestComponent(), new FanoutComponent(), new InboxStoreComponent(),
        new AckTimeoutComponent(), new PushGatewayComponent()));
    Map<String, String> secondEnv = new HashMap<>(envMap);
    secondEnv.put("IM_PUSH_API_URL", "http://127.0.0.1:" + first.http().port());
    secondEnv.put("IM_PUSH_QUEUE", "20");
    second = new PipelineRuntime(config.withHttpPort(0, state.resolve("second")), secondEnv, topics);
    second.start(List.of(new PushGatewayComponent()));
    await().atMost(Duration.ofSeconds(120)).until(() -> first.healthy() && second.healthy());
    devices = DeviceClient.factory();
  }

  @AfterAll
  static void stop() {
    OPEN.forEach(DeviceClient::close);
    if (devices != null) {
      devices.close();
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
  void aMessageSentAfterTheDeviceConnectedArrivesOnceOverHttpAndOverTheSocket() throws Exception {
    // Given alice and bob connected
    Device alice = connect(first, "alice", "phone", true);
    Device bob = connect(first, "bob", "phone", true);

    // When bob sends to alice over HTTP
    post("bob", Map.of("to", "alice", "body", "hi alice", "clientMsgId", "b-1"));

    // Then alice's phone receives it, and bob's own phone sees his message
    await().atMost(Duration.ofSeconds(30)).until(() -> alice.bodies().contains("hi alice"));
    await().atMost(Duration.ofSeconds(30)).until(() -> bob.bodies().contains("hi alice"));
    JsonNode entry = alice.entries.stream().filter(e -> e.path("body").asText().equals("hi alice")).findFirst()
        .orElseThrow();
    assertThat(entry.path("source").asText()).isEqualTo("inbox");
    assertThat(entry.path("senderId").asText()).isEqualTo("bob");
    assertThat(entry.path("conversationId").asText()).isEqualTo("d:alice:bob");

    // When alice answers over the socket
    JsonNode sent = alice.client.send(Map.of("to", "bob", "body", "hi bob", "clientMsgId", "a-1"))
        .get(30, TimeUnit.SECONDS);

    // Then the gateway says it was sent, and bob's phone receives it
    assertThat(sent.path("type").asText()).isEqualTo("sent");
    assertThat(sent.path("clientMsgId").asText()).isEqualTo("a-1");
    assertThat(sent.path("messageId").asText()).isNotEmpty();
    await().atMost(Duration.ofSeconds(30)).until(() -> bob.bodies().contains("hi bob"));
    // And each arrived once, in seq order (the second message proves the first was not repeated meanwhile)
    await().atMost(Duration.ofSeconds(30)).until(() -> alice.bodies().contains("hi bob"));
    assertThat(alice.bodies()).containsExactly("hi alice", "hi bob");
    assertThat(bob.bodies()).containsExactly("hi alice", "hi bob");
    assertThat(alice.seqs()).isSorted().doesNotHaveDuplicates();

    // And a send the API refuses is answered with an error frame
    JsonNode refused = alice.client.send(Map.of("to", "bob", "groupId", "g", "body", "x", "clientMsgId", "a-2"))
        .get(30, TimeUnit.SECONDS);
    assertThat(refused.path("type").asText()).isEqualTo("error");
    assertThat(refused.path("status").asInt()).isEqualTo(400);
  }

  @Test
  void aDeviceThatReconnectsReceivesExactlyWhatWasSentWhileItWasAwayInOrder() throws Exception {
    // Given carol's phone connected, received and ACKed a first message
    Device phone = connect(first, "carol", "phone", true);
    post("dan", Map.of("to", "carol", "body", "before", "clientMsgId", "d-0"));
    await().atMost(Duration.ofSeconds(30)).until(() -> phone.bodies().contains("before"));
    awaitCursor("carol", "phone", phone.seqs().get(phone.seqs().size() - 1));

    // When it disconnects and five messages are sent meanwhile
    phone.client.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> phone.closeCode != -1);
    for (int i = 1; i <= 5; i++) {
      post("dan", Map.of("to", "carol", "body", "away-" + i, "clientMsgId", "d-" + i));
    }
    awaitInbox("carol", 6);

    // And it reconnects (to the other instance) and another message follows live
    Device again = connect(second, "carol", "phone", true);
    await().atMost(Duration.ofSeconds(30)).until(() -> again.bodies().size() >= 5);
    post("dan", Map.of("to", "carol", "body", "live", "clientMsgId", "d-6"));

    // Then it receives exactly the missed ones, in order, then "synced", then the live one
    await().atMost(Duration.ofSeconds(30)).until(() -> again.bodies().contains("live"));
    assertThat(again.bodies()).containsExactly("away-1", "away-2", "away-3", "away-4", "away-5", "live");
    assertThat(again.seqs()).isSorted().doesNotHaveDuplicates();
    assertThat(again.entriesAtSynced).as("entries received before the synced frame").isEqualTo(5);
    assertThat(again.client.syncedFuture()).isDone();
  }

  @Test
  void aDeviceThatSendsItsCursorResumesAfterItNotAfterTheCommittedOne() throws Exception {
    // Given ruth's phone received three messages and its ACK of the first one is committed, the others not
    Device phone = connect(first, "ruth", "phone", false);
    post("sam", Map.of("to", "ruth", "body", "one", "clientMsgId", "s-1"));
    await().atMost(Duration.ofSeconds(30)).until(() -> phone.bodies().size() == 1);
    phone.client.ack(phone.lastCursor);
    awaitCursor("ruth", "phone", phone.seqs().get(0));
    post("sam", Map.of("to", "ruth", "body", "two", "clientMsgId", "s-2"));
    post("sam", Map.of("to", "ruth", "body", "three", "clientMsgId", "s-3"));
    await().atMost(Duration.ofSeconds(30)).until(() -> phone.bodies().size() == 3);
    String own = phone.lastCursor;
    phone.client.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> phone.closeCode != -1);
    post("sam", Map.of("to", "ruth", "body", "four", "clientMsgId", "s-4"));
    awaitInbox("ruth", 4);

    // When it reconnects (to the other instance) with the cursor of the last entry it stored
    Device again = new Device(true);
    again.client = devices.connect(base(second), TestTokens.token("ruth"), "phone", own, again)
        .get(30, TimeUnit.SECONDS);
    OPEN.add(again.client);

    // Then the backlog starts after that cursor, not after the committed one: only "four", then synced
    await().atMost(Duration.ofSeconds(30)).until(() -> again.entriesAtSynced >= 0);
    assertThat(again.bodies()).containsExactly("four");
    assertThat(again.entriesAtSynced).isEqualTo(1);
    // And ACKing it commits it
    awaitCursor("ruth", "phone", again.seqs().get(0));
    // And a cursor that is not one is refused before the upgrade
    assertThat(upgradeStatus(base(first), "/v1/ws?device=phone&cursor=not-a-cursor", TestTokens.token("ruth")))
        .isEqualTo(400);
  }

  @Test
  void aDeviceThatDoesNotAckGetsOneFinalTimeoutPerSeqAndIsClosedWhileOneThatAcksGetsNone() throws Exception {
    // Given erin's tablet never ACKs and her phone ACKs everything
    Device tablet = connect(first, "erin", "tablet", false);
    Device phone = connect(first, "erin", "phone", true);

    // When three messages reach her
    for (int i = 1; i <= 3; i++) {
      post("dan", Map.of("to", "erin", "body", "t-" + i, "clientMsgId", "e-" + i));
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> tablet.bodies().size() == 3 && phone.bodies().size() == 3);
    List<Long> seqs = tablet.seqs();

    // Then the wheel times out each of the tablet's seqs exactly once, finally, and the gateway closes the tablet
    List<ConsumerRecord<String, AckTimeout>> timeouts = new ArrayList<>();
    try (KafkaConsumer<String, AckTimeout> consumer = timeoutReader()) {
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> {
          if (r.key().equals("erin")) {
            timeouts.add(r);
          }
        });
        return timeouts.stream().mapToLong(r -> r.value().getSeqs().size()).sum() >= 3;
      });
      // the phone's deadlines were in the same ticks: anything for it would have come with these
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (System.nanoTime() < until) {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> {
          if (r.key().equals("erin")) {
            timeouts.add(r);
          }
        });
      }
    }
    assertThat(timeouts).allSatisfy(r -> {
      assertThat(r.value().getDeviceId()).isEqualTo("tablet");
      Header last = r.headers().lastHeader(Gateway.FINAL_HEADER);
      assertThat(last).isNotNull();
      assertThat(new String(last.value())).isEqualTo("true");
    });
    assertThat(timeouts.stream().flatMap(r -> r.value().getSeqs().stream()).toList())
        .containsExactlyInAnyOrderElementsOf(seqs);
    await().atMost(Duration.ofSeconds(10)).until(() -> tablet.closeCode == 4000);
    assertThat(phone.client.isOpen()).isTrue();
  }

  @Test
  void withTwoGatewayInstancesADeviceOnEitherReceivesItsEntries() throws Exception {
    // Given gus on the first instance and hal on the second (which runs nothing but a gateway)
    Device gus = connect(first, "gus", "phone", true);
    Device hal = connect(second, "hal", "phone", true);

    // When ida writes to each
    post("ida", Map.of("to", "gus", "body", "to gus", "clientMsgId", "i-1"));
    post("ida", Map.of("to", "hal", "body", "to hal", "clientMsgId", "i-2"));

    // Then both receive theirs
    await().atMost(Duration.ofSeconds(30)).until(() -> gus.bodies().contains("to gus")
        && hal.bodies().contains("to hal"));
    // And hal sends through the second instance's socket
    JsonNode sent = hal.client.send(Map.of("to", "gus", "body", "from hal", "clientMsgId", "h-1"))
        .get(30, TimeUnit.SECONDS);
    assertThat(sent.path("type").asText()).isEqualTo("sent");
    await().atMost(Duration.ofSeconds(30)).until(() -> gus.bodies().contains("from hal"));
    assertThat(gus.bodies()).containsExactly("to gus", "from hal");
    // (hal's own copy is in hal's inbox partition, read by the other instance: it may come after gus's)
    await().atMost(Duration.ofSeconds(30)).until(() -> hal.bodies().contains("from hal"));
    assertThat(hal.bodies()).containsExactly("to hal", "from hal");
  }

  @Test
  void aSlowDeviceIsToldToResyncAndLosesNothing() throws Exception {
    // Given jo's phone on the second instance (queue of 20 entries) that receives but does not ACK
    Device slow = connect(second, "jo", "phone", false);

    // When 40 messages reach jo at once (well within the 5 s ACK timeout)
    List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> posts = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      posts.add(postAsync("kim", Map.of("to", "jo", "body", "n-" + i, "clientMsgId", "k-" + i)));
    }
    for (var p : posts) {
      assertThat(p.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(202);
    }

    // Then the gateway tells it to resync and closes it, without waiting for the rest
    await().atMost(Duration.ofSeconds(30)).until(() -> slow.closeCode == 4008);
    assertThat(slow.resyncs).hasSize(1);
    assertThat(slow.bodies().size()).isLessThanOrEqualTo(20);
    awaitInbox("jo", 40);

    // When it reconnects and ACKs as it goes
    Device again = connect(second, "jo", "phone", true);

    // Then it receives all 40, in inbox order, each once
    List<String> expected = new ArrayList<>();
    get("jo", "/v1/users/jo/inbox?limit=1000").path("entries").forEach(e -> expected.add(e.path("body").asText()));
    assertThat(expected).hasSize(40);
    await().atMost(Duration.ofSeconds(60)).until(() -> again.bodies().size() >= 40);
    assertThat(again.bodies()).containsExactlyElementsOf(expected);
  }

  @Test
  void aBadTokenIsRefusedBeforeTheUpgradeAndATokenCannotActForAnotherUser() throws Exception {
    URI base = base(first);
    // An invalid, an expired and a foreign-signed token: 401, no socket
    for (String token : List.of("not-a-jwt", TestTokens.expired("lee"), TestTokens.signedWithOtherKey("lee"))) {
      assertThatThrownBy(() -> devices.connect(base, token, "phone", new Device(true)).get(30, TimeUnit.SECONDS))
          .hasCauseInstanceOf(DeviceClient.RefusedException.class)
          .satisfies(e -> assertThat(((DeviceClient.RefusedException) e.getCause()).status()).isEqualTo(401));
    }
    // Without a token at all: 401
    assertThat(upgradeStatus(base, "/v1/ws?device=phone", null)).isEqualTo(401);
    // mo's token cannot open lee's connection, nor act as another device than its own
    assertThat(upgradeStatus(base, "/v1/ws?device=phone&user=lee", TestTokens.token("mo"))).isEqualTo(403);
    assertThat(upgradeStatus(base, "/v1/ws?device=phone", TestTokens.token("mo", "tablet"))).isEqualTo(403);
    // and a valid token is upgraded (101)
    assertThat(upgradeStatus(base, "/v1/ws?device=phone", TestTokens.token("mo"))).isEqualTo(101);

    // And a connected device cannot ACK what it was never pushed (e.g. lee's seqs): the cursor does not move
    Device mo = connect(first, "mo", "phone", true);
    post("lee", Map.of("to", "lee2", "body", "for lee2", "clientMsgId", "l-1"));
    Device probe = connect(first, "mo", "probe", false);
    probe.client.ack(1_000_000);
    await().atMost(Duration.ofSeconds(10)).until(() -> !probe.errors.isEmpty());
    assertThat(probe.errors.get(0).path("error").asText()).contains("beyond what was pushed");
    assertThat(cursor("mo", "probe")).isEqualTo(-1);
    assertThat(mo.client.isOpen()).isTrue();
  }

  @Test
  void largeGroupMessagesArePushedLiveOnceFromTheGroupTimelineAndFollowJoinsAndLeaves() throws Exception {
    // Given the large group 'big' (ann, bo, cy: three members, above the threshold of 2) whose first message
    // switched it to read diffusion, and bo's phone connected after that message
    member("ann", "PUT", "big", "ann");
    member("ann", "PUT", "big", "bo");
    member("ann", "PUT", "big", "cy");
    post("ann", Map.of("groupId", "big", "body", "m1", "clientMsgId", "big-1"));
    Device bo = connect(first, "bo", "phone", true);
    await().atMost(Duration.ofSeconds(30)).until(() -> bo.bodies().contains("m1"));
    // And dee's phone connected before dee is in the group
    Device dee = connect(first, "dee", "phone", true);

    // When ann sends to the group while bo is connected
    post("ann", Map.of("groupId", "big", "body", "m2", "clientMsgId", "big-2"));

    // Then bo's phone receives it live, once, from the group's timeline
    await().atMost(Duration.ofSeconds(30)).until(() -> bo.bodies().contains("m2"));
    JsonNode m2 = bo.entries.stream().filter(e -> e.path("body").asText().equals("m2")).findFirst().orElseThrow();
    assertThat(m2.path("source").asText()).isEqualTo("#big");
    assertThat(m2.path("conversationId").asText()).isEqualTo("big");

    // When ann adds dee (connected) and sends again
    member("ann", "PUT", "big", "dee");
    post("ann", Map.of("groupId", "big", "body", "m3", "clientMsgId", "big-3"));

    // Then dee's phone receives the join and then the message, from the timeline; bo receives it too
    await().atMost(Duration.ofSeconds(30)).until(() -> dee.bodies().contains("m3") && bo.bodies().contains("m3"));
    assertThat(dee.bodies()).containsExactly("m3");
    assertThat(types(dee)).containsSubsequence("CONVERSATION_JOINED", "MESSAGE");
    assertThat(dee.entries.get(dee.entries.size() - 1).path("source").asText()).isEqualTo("#big");

    // When dee leaves and ann sends once more, then writes to dee directly
    member("dee", "DELETE", "big", "dee");
    await().atMost(Duration.ofSeconds(30)).until(() -> types(dee).contains("CONVERSATION_LEFT"));
    post("ann", Map.of("groupId", "big", "body", "m4", "clientMsgId", "big-4"));
    await().atMost(Duration.ofSeconds(30)).until(() -> bo.bodies().contains("m4"));
    post("ann", Map.of("to", "dee", "body", "direct", "clientMsgId", "big-5"));

    // Then the leaver got nothing more from the group (the same reader passed m4 before the direct message)
    await().atMost(Duration.ofSeconds(30)).until(() -> dee.bodies().contains("direct"));
    assertThat(dee.bodies()).containsExactly("m3", "direct");
    // And bo received each group message once, each source in its order
    assertThat(bo.bodies()).containsExactly("m1", "m2", "m3", "m4");
    assertThat(bo.entries.stream().filter(e -> e.path("source").asText().equals("#big"))
        .map(e -> e.path("seq").asLong()).toList()).isSorted().doesNotHaveDuplicates();
    assertThat(bo.entries.stream().filter(e -> e.path("source").asText().equals("inbox"))
        .map(e -> e.path("seq").asLong()).toList()).isSorted().doesNotHaveDuplicates();

    // When bo's ACKs are committed (a sync after the committed vector is empty) and the phone reconnects
    await().atMost(Duration.ofSeconds(30))
        .until(() -> get("bo", "/v1/users/bo/devices/phone/sync").path("entries").isEmpty());
    bo.client.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> bo.closeCode != -1);
    Device again = connect(first, "bo", "phone", true);
    post("ann", Map.of("to", "bo", "body", "after", "clientMsgId", "big-6"));

    // Then nothing is sent again: the first entry it gets is the new one
    await().atMost(Duration.ofSeconds(30)).until(() -> again.bodies().contains("after"));
    assertThat(again.bodies()).containsExactly("after");
  }

  // ---------------------------------------------------------------------------------------------------- helpers

  /** The HTTP status of a raw upgrade request (what a client sees when the upgrade is refused). */
  private static int upgradeStatus(URI base, String pathAndQuery, String token) throws Exception {
    try (java.net.Socket socket = new java.net.Socket(base.getHost(), base.getPort())) {
      socket.setSoTimeout(30_000);
      String head = "GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
          + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
          + (token == null ? "" : "Authorization: Bearer " + token + "\r\n") + "\r\n";
      socket.getOutputStream().write(head.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      byte[] status = socket.getInputStream().readNBytes(12);
      return Integer.parseInt(new String(status, java.nio.charset.StandardCharsets.US_ASCII).substring(9, 12));
    }
  }

  private static Device connect(PipelineRuntime instance, String user, String device, boolean autoAck)
      throws Exception {
    Device d = Device.connect(devices, base(instance), TestTokens.token(user), device, autoAck);
    OPEN.add(d.client);
    return d;
  }

  private static URI base(PipelineRuntime instance) {
    return URI.create("http://127.0.0.1:" + instance.http().port());
  }

  private static void member(String actor, String method, String group, String user) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base(first) + "/v1/groups/" + group
        + "/members/" + user)).header("Authorization", TestTokens.bearer(actor))
        .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
  }

  private static List<String> types(Device d) {
    return d.entries.stream().map(e -> e.path("type").asText()).toList();
  }

  private static void post(String user, Map<String, String> body) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base(first) + "/v1/messages"))
        .header("Authorization", TestTokens.bearer(user)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(dev.impipe.edge.http.Json.MAPPER.writeValueAsString(body)))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
  }

  private static java.util.concurrent.CompletableFuture<HttpResponse<String>> postAsync(String user,
      Map<String, String> body) throws Exception {
    return HTTP.sendAsync(HttpRequest.newBuilder(URI.create(base(first) + "/v1/messages"))
        .header("Authorization", TestTokens.bearer(user)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(dev.impipe.edge.http.Json.MAPPER.writeValueAsString(body)))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode get(String user, String path) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base(first) + path))
        .header("Authorization", TestTokens.bearer(user)).GET().build(), HttpResponse.BodyHandlers.ofString());
    return dev.impipe.edge.http.Json.MAPPER.readTree(r.body());
  }

  private static long cursor(String user, String device) throws Exception {
    return get(user, "/v1/users/" + user + "/devices/" + device + "/cursor").path("seq").asLong();
  }

  private static void awaitCursor(String user, String device, long seq) {
    await().atMost(Duration.ofSeconds(30)).until(() -> cursor(user, device) >= seq);
  }

  private static void awaitInbox(String user, int entries) {
    await().atMost(Duration.ofSeconds(30))
        .until(() -> get(user, "/v1/users/" + user + "/inbox?limit=1000").path("entries").size() >= entries);
  }

  private static KafkaConsumer<String, AckTimeout> timeoutReader() {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("isolation.level", "read_committed");
    props.put("auto.offset.reset", "earliest");
    props.put("group.id", ItEnvironment.unique("timeouts"));
    KafkaConsumer<String, AckTimeout> consumer = new KafkaConsumer<>(props,
        topics.ackTimeouts().keySerde().deserializer(), topics.ackTimeouts().valueSerde().deserializer());
    consumer.subscribe(List.of(topics.ackTimeouts().name()));
    return consumer;
  }
}
