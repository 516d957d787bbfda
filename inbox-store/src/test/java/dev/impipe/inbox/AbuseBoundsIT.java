package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.FanoutComponent;
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
import java.net.URI;
import java.net.URLEncoder;
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
 * One user can slow only themselves, on the real broker (fan-out and one inbox-store instance, 8 HTTP workers,
 * the default 3 s query timeout): a member of a large group keeping 24 parallel syncs waiting for a timeline offset
 * that never comes ({@code groupMinSeq=g:9223372036854775807}) parks no worker, gets 429 beyond 16 waiting
 * requests, and another user's inbox stays fast; a fat page is cut by bytes and paging continues; a 503 says
 * nothing internal; a device id with {@code #} is refused.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class AbuseBoundsIT {

  private static final int PARALLEL = 24;
  private static final int ROUNDS = 3;
  private static final int MAX_WAITING = 16; // the default
  private static final int FAT_MESSAGES = 120;
  private static final String FAT_BODY = "\u0002".repeat(10_000);
  private static final long MAX_RESPONSE_BYTES = 1L << 20;

  private static PipelineRuntime runtime;
  private static ImTopics topics;
  private static Path state;
  private static KafkaProducer<String, ChatMessage> messages;
  private static KafkaProducer<String, MembershipChange> membership;
  private static final HttpClient VICTIM = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeAll
  static void start() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("abuse") + ".";
    Map<String, String> vars = new HashMap<>(TestTokens.env());
    vars.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "2", "IM_CONVERSATION_PARTITIONS", "2",
        "IM_LARGE_GROUP_THRESHOLD", "2", "IM_HTTP_WORKERS", "8"));
    ImConfig config = ImConfig.fromEnv(vars).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    state = TestTmpDir.newDir("abuse-it-");
    runtime = new PipelineRuntime(config.withHttpPort(0, state), vars, topics);
    runtime.start(List.of(new FanoutComponent(), new InboxStoreComponent()));
    await().atMost(Duration.ofSeconds(90)).until(runtime::healthy);
    Map<String, Object> props = Map.of("bootstrap.servers", env.bootstrapServers(), "enable.idempotence", true,
        "acks", "all", "max.request.size", 8 << 20);
    messages = new KafkaProducer<>(props, topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer());
    membership = new KafkaProducer<>(props, topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer());
    try (KafkaProducer<String, InboxEntry> inbox = new KafkaProducer<>(props,
        topics.inbox().keySerde().serializer(), topics.inbox().valueSerde().serializer())) {
      inbox.send(new ProducerRecord<>(topics.inbox().name(), "victim",
          TestData.message("victim", "d:friend:victim", "hello", Instant.now()))).get(30, TimeUnit.SECONDS);
    }
  }

  @AfterAll
  static void stop() {
    if (messages != null) {
      messages.close();
      membership.close();
    }
    if (runtime != null) {
      runtime.close();
    }
    dev.impipe.embedded.Dirs.deleteRecursively(state);
  }

  @Test
  void parallelGroupMinSeqSyncsOfOneMemberGet429BeyondTheBoundAndAnotherUsersInboxStaysFast() throws Exception {
    // Given mallory, a member of the large group big (threshold 2: large from 3 members)
    for (String member : List.of("mallory", "amy", "x1", "x2")) {
      join("big", member);
    }
    send("big", "amy", "b1", "hi");
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      JsonNode page = Json.MAPPER.readTree(get(VICTIM, "mallory", "/v1/users/mallory/devices/probe/sync").body());
      return page.path("largeGroups").toString().contains("\"big\"");
    });
    String victimInbox = "/v1/users/victim/inbox?limit=10";
    assertThat(get(VICTIM, "victim", victimInbox).statusCode()).isEqualTo(200); // warmed up

    // When mallory keeps 24 syncs waiting for an offset of big's timeline that never comes, three rounds in a row
    HttpClient attacker = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    List<HttpResponse<String>> answers = new ArrayList<>();
    CompletableFuture<Void> attack = CompletableFuture.runAsync(() -> {
      for (int round = 0; round < ROUNDS; round++) {
        List<CompletableFuture<HttpResponse<String>>> syncs = new ArrayList<>();
        for (int i = 0; i < PARALLEL; i++) {
          syncs.add(attacker.sendAsync(request("mallory",
              "/v1/users/mallory/devices/d/sync?groupMinSeq=big:9223372036854775807"),
              HttpResponse.BodyHandlers.ofString()));
        }
        syncs.forEach(s -> answers.add(s.join()));
      }
    });
    // (measured once mallory's waits are pending)
    await().atMost(Duration.ofSeconds(10)).until(() -> pending() >= 1 || attack.isDone());
    List<Long> victimMs = new ArrayList<>();
    while (!attack.isDone() || victimMs.size() < 8) {
      long t0 = System.nanoTime();
      HttpResponse<String> inbox = get(VICTIM, "victim", victimInbox);
      victimMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
      assertThat(inbox.statusCode()).isEqualTo(200);
    }
    attack.get(60, TimeUnit.SECONDS);

    // Then the victim's inbox answered within a second every time (p99 and max), where it took 8.5 s before
    List<Long> sorted = victimMs.stream().sorted().toList();
    long p99 = sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1);
    long max = sorted.get(sorted.size() - 1);
    System.out.printf("victim inbox under attack: %d requests, p50 %d ms, p99 %d ms, max %d ms%n", sorted.size(),
        sorted.get(sorted.size() / 2), p99, max);
    assertThat(p99).isLessThan(500);
    assertThat(max).isLessThan(1_000);
    // and mallory got 429 (with Retry-After and a reason) beyond 16 waiting syncs, a generic 503 for the others
    assertThat(answers).hasSize(PARALLEL * ROUNDS);
    List<HttpResponse<String>> refused = answers.stream().filter(r -> r.statusCode() == 429).toList();
    assertThat(refused.size()).isGreaterThanOrEqualTo((PARALLEL - MAX_WAITING) * ROUNDS);
    assertThat(refused).allSatisfy(r -> {
      assertThat(r.headers().firstValue("Retry-After")).isPresent();
      assertThat(Json.MAPPER.readTree(r.body()).path("error").asText()).contains("waiting");
    });
    assertThat(answers).allSatisfy(r -> {
      assertThat(r.statusCode()).isIn(429, 503);
      if (r.statusCode() == 503) {
        assertThat(Json.MAPPER.readTree(r.body()).path("error").asText()).isEqualTo("not ready, retry");
      }
    });
    assertThat(pending()).isZero();
  }

  @Test
  void aFatPageIsCutByBytesAndNextContinuesInInboxSyncAndHistory() throws Exception {
    // Given fay, alone in group fat, with 120 messages of 10,000 control characters (~60 KB each in JSON)
    join("fat", "fay");
    for (int i = 0; i < FAT_MESSAGES; i++) {
      send("fat", "fay", "f" + i, FAT_BODY);
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> Json.MAPPER.readTree(get(VICTIM, "fay",
        "/v1/conversations/fat/messages?limit=1").body()).path("entries").path(0).path("messageId").asText()
        .equals("f" + (FAT_MESSAGES - 1)));
    await().atMost(Duration.ofSeconds(60)).until(() -> messageIds("/v1/users/fay/inbox?limit=1000", "after")
        .contains("f" + (FAT_MESSAGES - 1)));

    // When her inbox, a device's sync and the group's history are read with limit=1000, page after page
    List<String> inbox = messageIds("/v1/users/fay/inbox?limit=1000", "after");
    List<String> sync = messageIds("/v1/users/fay/devices/tab/sync?limit=1000", "after");
    List<String> history = messageIds("/v1/conversations/fat/messages?limit=1000", "before");

    // Then every page was within the byte budget and several were needed (asserted in messageIds), and together
    // they hold every message once, in order
    List<String> sent = new ArrayList<>();
    for (int i = 0; i < FAT_MESSAGES; i++) {
      sent.add("f" + i);
    }
    assertThat(inbox).containsExactlyElementsOf(sent);
    assertThat(sync).containsExactlyElementsOf(sent);
    List<String> newestFirst = new ArrayList<>(sent);
    java.util.Collections.reverse(newestFirst);
    assertThat(history).containsExactlyElementsOf(newestFirst);
  }

  @Test
  void a503SaysNothingInternal() throws Exception {
    // When the victim asks for an inbox seq its partition will not reach within the query timeout
    HttpResponse<String> behind = get(VICTIM, "victim", "/v1/users/victim/inbox?minSeq=9000000000");

    // Then the answer is a 503 with Retry-After and a generic reason: no store, partition, offset or host
    assertThat(behind.statusCode()).isEqualTo(503);
    assertThat(behind.headers().firstValue("Retry-After")).contains("1");
    assertThat(Json.MAPPER.readTree(behind.body()).path("error").asText()).isEqualTo("not ready, retry");
  }

  @Test
  void aCursorPutForADeviceIdWithHashIsRefused() throws Exception {
    // a device id "phone#big" would name phone's position in the large group big
    String path = "/v1/users/mallory/devices/phone%23big/cursor";
    HttpResponse<String> put = VICTIM.send(HttpRequest.newBuilder(uri(path))
        .header("Authorization", "Bearer " + TestTokens.token("mallory")).header("Content-Type", "application/json")
        .PUT(HttpRequest.BodyPublishers.ofString("{\"seq\":0}")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(put.statusCode()).as(put.body()).isEqualTo(400);
    assertThat(Json.MAPPER.readTree(put.body()).path("error").asText()).contains("device id");
  }

  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Reads {@code path} page after page ({@code param}: the previous page's {@code next}, or its {@code cursor} for
   * a sync) until {@code hasMore} is false; every page is within the byte budget, and a fat timeline needs several.
   * Returns the message ids of the MESSAGE entries read, in page order.
   */
  private static List<String> messageIds(String path, String param) throws Exception {
    List<String> ids = new ArrayList<>();
    String next = null;
    boolean more = true;
    int pages = 0;
    while (more) {
      String page = next == null ? path : path + "&" + param + "=" + next;
      HttpResponse<String> response = get(VICTIM, "fay", page);
      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertThat((long) response.body().length()).isLessThanOrEqualTo(MAX_RESPONSE_BYTES + 4_096);
      JsonNode json = Json.MAPPER.readTree(response.body());
      json.get("entries").forEach(e -> {
        if (e.get("type").asText().equals("MESSAGE")) {
          ids.add(e.get("messageId").asText());
        }
      });
      more = json.get("hasMore").asBoolean();
      next = path.contains("/sync") ? URLEncoder.encode(json.get("cursor").asText(), StandardCharsets.UTF_8)
          : json.get("next").asText();
      pages++;
      assertThat(pages).isLessThan(FAT_MESSAGES + 10);
    }
    if (ids.size() == FAT_MESSAGES) {
      assertThat(pages).as("pages of %s", path).isGreaterThan(FAT_MESSAGES * 60_000 / (int) MAX_RESPONSE_BYTES);
    }
    return ids;
  }

  private static long pending() {
    return (long) runtime.metrics().find("im.inbox.pending").gauges().stream()
        .mapToDouble(io.micrometer.core.instrument.Gauge::value).sum();
  }

  private static void join(String group, String user) throws Exception {
    membership.send(new ProducerRecord<>(topics.groupMembers().name(), group,
        new MembershipChange(group, user, MembershipOp.JOIN, Instant.now(), null, null))).get(30, TimeUnit.SECONDS);
  }

  private static void send(String group, String from, String id, String body) throws Exception {
    messages.send(new ProducerRecord<>(topics.messages().name(), group, ChatMessage.newBuilder().setMessageId(id)
        .setClientMsgId("c-" + id).setConversationId(group).setConversationType(ConversationType.GROUP)
        .setGroupId(group).setType(MessageType.MESSAGE).setSenderId(from).setBody(body).setSentAt(Instant.now())
        .build())).get(30, TimeUnit.SECONDS);
  }

  private static HttpRequest request(String user, String path) {
    return HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + TestTokens.token(user))
        .timeout(Duration.ofSeconds(30)).build();
  }

  private static HttpResponse<String> get(HttpClient client, String user, String path) throws Exception {
    return client.send(request(user, path), HttpResponse.BodyHandlers.ofString());
  }

  private static URI uri(String path) {
    return URI.create("http://127.0.0.1:" + runtime.http().port() + path);
  }
}
