package dev.impipe.notify.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.ingest.IngestComponent;
import dev.impipe.notify.NotifyComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.embedded.Dirs;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The notification path end to end on the real broker: HTTP registration, a message through ingest and fan-out, the
 * deciding app, the sender, a local Web Push service that checks VAPID and decrypts (its own RFC 8291 code).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class NotifyIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static WebPushReceiver push;
  private static PipelineRuntime runtime;
  private static Path state;
  private static String base;

  @BeforeAll
  static void start() throws Exception {
    push = new WebPushReceiver();
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("notify") + ".";
    state = TestTmpDir.newDir("notify-it-");
    Map<String, String> vars = new HashMap<>(TestTokens.env());
    vars.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "2", "IM_CONVERSATION_PARTITIONS", "2",
        "IM_NOTIFY_AFTER", "2s", "IM_NOTIFY_COALESCE", "60s", "IM_NOTIFY_PUSH_ENDPOINTS", push.prefix(),
        "IM_NOTIFY_VAPID_KEY_FILE", vapidKey(state).toString(), "IM_NOTIFY_VAPID_SUBJECT", "mailto:it@example.com",
        "IM_NOTIFY_RETRY_BACKOFF", "200ms"));
    ImConfig config = ImConfig.fromEnv(vars).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    runtime = new PipelineRuntime(config.withHttpPort(0, state), vars, topics);
    runtime.start(List.of(new IngestComponent(), new FanoutComponent(), new InboxStoreComponent(),
        new NotifyComponent()));
    await().atMost(Duration.ofSeconds(120)).until(runtime::healthy);
    base = "http://127.0.0.1:" + runtime.http().port();
  }

  @AfterAll
  static void stop() {
    if (runtime != null) {
      runtime.close();
    }
    if (push != null) {
      push.close();
    }
    Dirs.deleteRecursively(state);
  }

  @Test
  void anOfflineRegisteredDeviceGetsExactlyOneNotificationItCanDecrypt() throws Exception {
    // Given: bob's phone registered its browser subscription; carol's too (the later sentinel)
    register("bob", "phone");
    register("carol", "phone");
    // When: alice writes to bob, and bob's phone does not receive it
    send("alice", "bob", "hello bob, this is alice", "m1");
    // Then: one push, VAPID-signed for this origin, that decrypts to the payload
    await().atMost(Duration.ofSeconds(30)).until(() -> !push.received("bob-phone").isEmpty());
    WebPushReceiver.Push p = push.received("bob-phone").get(0);
    assertThat(p.error()).isNull();
    assertThat(p.payload().path("senderId").asText()).isEqualTo("alice");
    assertThat(p.payload().path("conversationId").asText()).isEqualTo("d:alice:bob");
    assertThat(p.payload().path("conversationType").asText()).isEqualTo("DIRECT");
    assertThat(p.payload().path("preview").asText()).isEqualTo("hello bob, this is alice");
    assertThat(p.payload().path("count").asInt()).isEqualTo(1);
    assertThat(p.payload().path("unreadTotal").asLong()).isEqualTo(1);
    assertThat(p.headers().get("content-encoding")).isEqualTo("aes128gcm");
    assertThat(p.headers()).containsKey("ttl").containsKey("topic");
    // ... and only one: a message to carol sent after it is notified, and by then bob still has one
    send("alice", "carol", "sentinel", "m2");
    await().atMost(Duration.ofSeconds(30)).until(() -> !push.received("carol-phone").isEmpty());
    assertThat(push.received("bob-phone")).hasSize(1);
  }

  @Test
  void aDeviceThatReceivedTheMessageIsNotNotified() throws Exception {
    // Given: dave's phone and erin's phone registered
    register("dave", "phone");
    register("erin", "phone");
    // When: alice writes to dave, and dave's phone syncs it and commits its cursor at once
    send("alice", "dave", "you will read this", "m3");
    long seq = await().atMost(Duration.ofSeconds(30)).until(() -> lastSeq("dave"), s -> s >= 0);
    HttpResponse<String> commit = call("dave", "PUT", "/v1/users/dave/devices/phone/cursor", "{\"seq\":" + seq + "}");
    assertThat(commit.statusCode()).isEqualTo(202);
    // Then: by the time a later message to erin is notified, dave's phone got nothing
    send("alice", "erin", "sentinel", "m4");
    await().atMost(Duration.ofSeconds(30)).until(() -> !push.received("erin-phone").isEmpty());
    assertThat(push.received("dave-phone")).isEmpty();
  }

  @Test
  void aBurstIsOneOrTwoNotificationsThatCountEveryMessage() throws Exception {
    register("frank", "phone");
    for (int i = 0; i < 5; i++) {
      send("alice", "frank", "burst " + i, "b" + i);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> push.received("frank-phone").stream()
        .mapToInt(p -> p.payload().path("count").asInt()).sum() >= 5);
    List<WebPushReceiver.Push> got = push.received("frank-phone");
    assertThat(got).hasSizeBetween(1, 2);
    assertThat(got.stream().mapToInt(p -> p.payload().path("count").asInt()).sum()).isEqualTo(5);
    assertThat(got.get(got.size() - 1).payload().path("preview").asText()).isEqualTo("burst 4");
  }

  @Test
  void aSubscriptionThePushServiceSaysIsGoneIsRemoved() throws Exception {
    register("gina", "phone");
    push.answer("gina-phone", 410);
    send("alice", "gina", "to a closed browser", "g1");
    await().atMost(Duration.ofSeconds(30)).until(() -> !push.received("gina-phone").isEmpty());
    await().atMost(Duration.ofSeconds(30)).until(() -> call("gina", "GET", "/v1/users/gina/devices/phone/push",
        null).statusCode() == 404);
  }

  @Test
  void aPushServiceAsking429WithRetryAfterIsAskedAgainAfterIt() throws Exception {
    register("hank", "phone");
    push.answer("hank-phone", 429);
    send("alice", "hank", "busy push service", "h1");
    await().atMost(Duration.ofSeconds(30)).until(() -> push.received("hank-phone").size() >= 2);
    List<WebPushReceiver.Push> got = push.received("hank-phone");
    assertThat(got.get(1).receivedAtMs() - got.get(0).receivedAtMs()).isGreaterThanOrEqualTo(1_000);
    assertThat(got.get(1).payload().path("notificationId").asText())
        .isEqualTo(got.get(0).payload().path("notificationId").asText());
  }

  @Test
  void registrationsAreTheUsersOwnAndReadWithoutTheirSecrets() throws Exception {
    register("ivan", "laptop");
    HttpResponse<String> read = await().atMost(Duration.ofSeconds(30))
        .until(() -> call("ivan", "GET", "/v1/users/ivan/devices/laptop/push", null), r -> r.statusCode() == 200);
    JsonNode json = JSON.readTree(read.body());
    assertThat(json.path("provider").asText()).isEqualTo("webpush");
    assertThat(read.body()).doesNotContain("p256dh").doesNotContain("auth\"").doesNotContain("/push/ivan");
    assertThat(call("mallory", "GET", "/v1/users/ivan/devices/laptop/push", null).statusCode()).isEqualTo(403);
    assertThat(call("ivan", "PUT", "/v1/users/ivan/devices/laptop/push", "{\"provider\":\"webpush\","
        + "\"subscription\":{\"endpoint\":\"https://example.invalid/x\",\"keys\":{\"p256dh\":\"x\",\"auth\":\"y\"}}}")
        .statusCode()).isEqualTo(400);
    JsonNode config = JSON.readTree(call("ivan", "GET", "/v1/push/config", null).body());
    assertThat(config.path("vapidPublicKey").asText()).hasSize(87);
    assertThat(config.path("providers").toString()).contains("webpush");

    assertThat(call("ivan", "DELETE", "/v1/users/ivan/devices/laptop/push", null).statusCode()).isEqualTo(204);
    await().atMost(Duration.ofSeconds(30)).until(() -> call("ivan", "GET", "/v1/users/ivan/devices/laptop/push",
        null).statusCode() == 404);
    assertThat(call("ivan", "DELETE", "/v1/users/ivan/devices/laptop/push", null).statusCode()).isEqualTo(404);
  }

  private static void register(String user, String device) throws Exception {
    String body = "{\"provider\":\"webpush\",\"subscription\":" + push.subscribe(user + "-" + device) + "}";
    HttpResponse<String> r = call(user, "PUT", "/v1/users/" + user + "/devices/" + device + "/push", body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
    // The registration is read by the deciding app before a message may be decided for it.
    await().atMost(Duration.ofSeconds(30)).until(() -> call(user, "GET", "/v1/users/" + user + "/devices/" + device
        + "/push", null).statusCode() == 200);
  }

  private static void send(String from, String to, String text, String clientMsgId) throws Exception {
    HttpResponse<String> r = call(from, "POST", "/v1/messages", JSON.createObjectNode().put("senderId", from)
        .put("to", to).put("body", text).put("clientMsgId", clientMsgId).toString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
  }

  private static long lastSeq(String user) throws Exception {
    JsonNode entries = JSON.readTree(call(user, "GET", "/v1/users/" + user + "/inbox?limit=100", null).body())
        .path("entries");
    return entries.isEmpty() ? -1 : entries.get(entries.size() - 1).path("seq").asLong();
  }

  private static HttpResponse<String> call(String user, String method, String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
        .header("Authorization", "Bearer " + TestTokens.token(user))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A VAPID key pair as an operator makes it ({@code openssl ecparam -genkey ... | openssl pkcs8 -topk8}). */
  static Path vapidKey(Path dir) throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    String pem = "-----BEGIN PRIVATE KEY-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
            .encodeToString(g.generateKeyPair().getPrivate().getEncoded())
        + "\n-----END PRIVATE KEY-----\n";
    Path file = dir.resolve("vapid.pem");
    Files.writeString(file, pem);
    Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    return file;
  }
}
