package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.edge.auth.TestCallers;
import dev.impipe.embedded.Dirs;
import dev.impipe.testkit.TestTmpDir;
import java.io.ByteArrayInputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What {@code bin/im local} does, in-process: embedded broker and registry, every component, the HTTP API; produce
 * and tail against it; and a restart on the same data dir that keeps broker data, Streams state and schemas.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class LocalModeIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private Path dataDir;
  private Map<String, String> env;

  @BeforeEach
  void setUp() throws Exception {
    dataDir = TestTmpDir.newDir("im-local-it-");
    env = Map.of("IM_HTTP_PORT", "0", "IM_CONVERSATION_PARTITIONS", "3", "IM_USER_PARTITIONS", "3",
        Endpoints.IM_LOCAL_ENDPOINTS_FILE, dataDir.resolve("endpoints.properties").toString());
  }

  @AfterEach
  void tearDown() {
    Dirs.deleteRecursively(dataDir);
  }

  @Test
  void sendOverHttpTailTheInboxProduceAndRestartWithEverythingIntact() throws Exception {
    String firstMessageId;
    try (LocalLauncher local = LocalLauncher.start(env, Optional.of(dataDir.resolve("data")), quietLog())) {
      local.awaitHealthy(Duration.ofMinutes(2));
      String base = local.endpoints().httpUrl();
      assertThat(get(base + "/health").statusCode()).isEqualTo(200);
      assertThat(get(base + "/metrics").body()).contains("jvm_memory_used_bytes");

      // Group membership and messages over HTTP
      assertThat(send("PUT", base + "/v1/groups/team/members/alice", "").statusCode()).isEqualTo(202);
      assertThat(send("PUT", base + "/v1/groups/team/members/bob", "").statusCode()).isEqualTo(202);
      HttpResponse<String> posted = send("POST", base + "/v1/messages",
          "{\"senderId\":\"alice\",\"groupId\":\"team\",\"body\":\"hello team\",\"clientMsgId\":\"c1\"}");
      assertThat(posted.statusCode()).isEqualTo(202);
      firstMessageId = JSON.readTree(posted.body()).get("messageId").asText();
      assertThat(send("POST", base + "/v1/messages",
          "{\"senderId\":\"bob\",\"to\":\"alice\",\"body\":\"hi alice\",\"clientMsgId\":\"c2\"}").statusCode())
          .isEqualTo(202);
      HttpResponse<String> bad = send("POST", base + "/v1/messages", "{\"senderId\":\"bob\",\"body\":\"x\"}");
      assertThat(bad.statusCode()).isEqualTo(400);
      assertThat(JSON.readTree(bad.body()).get("error").asText()).isNotBlank();

      // bin/im tail im.inbox sees the fan-out: 2 JOINED + 2 group copies + 2 direct copies
      List<JsonNode> inbox = tail(local, "im.inbox", 6);
      assertThat(inbox).extracting(l -> l.get("value").get("type").asText() + ":" + l.get("key").asText())
          .containsExactlyInAnyOrder("CONVERSATION_JOINED:alice", "CONVERSATION_JOINED:bob", "MESSAGE:alice",
              "MESSAGE:bob", "MESSAGE:alice", "MESSAGE:bob");

      // bin/im produce: a bad line is reported by number, the good ones still go out
      String lines = "{\"key\":\"d:carol:dave\",\"value\":{\"messageId\":\"p1\",\"clientMsgId\":\"p1\","
          + "\"conversationId\":\"d:carol:dave\",\"conversationType\":\"DIRECT\",\"type\":\"MESSAGE\","
          + "\"senderId\":\"carol\",\"recipientId\":\"dave\",\"body\":\"from the shell\",\"sentAt\":1700000000000}}\n"
          + "{not json\n";
      CliRun produced = CliRun.of(cliEnv(), new ByteArrayInputStream(lines.getBytes(StandardCharsets.UTF_8)),
          "produce", "im.messages");
      assertThat(produced.status()).isEqualTo(1);
      assertThat(produced.err()).contains("line 2: malformed JSON").contains("produced 1 record(s)");
      assertThat(tail(local, "im.inbox", 8)).extracting(l -> l.get("value").get("body").asText(null))
          .contains("from the shell");

      // A device syncs over HTTP, commits its cursor, syncs again and gets only what is newer
      JsonNode firstSync = JSON.readTree(get(base + "/v1/users/alice/devices/phone/sync?limit=50").body());
      List<Long> seqs = new ArrayList<>();
      firstSync.get("entries").forEach(e -> seqs.add(e.get("seq").asLong()));
      assertThat(seqs).hasSize(3).isSorted().doesNotHaveDuplicates(); // JOINED, group message, direct message
      long next = firstSync.get("next").asLong();
      assertThat(send("PUT", base + "/v1/users/alice/devices/phone/cursor", "{\"seq\":" + next + "}").statusCode())
          .isEqualTo(202);
      send("POST", base + "/v1/messages",
          "{\"senderId\":\"bob\",\"to\":\"alice\",\"body\":\"newer\",\"clientMsgId\":\"c4\"}");
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        JsonNode again = JSON.readTree(get(base + "/v1/users/alice/devices/phone/sync?limit=50").body());
        assertThat(again.get("entries")).hasSize(1);
        assertThat(again.get("entries").get(0).get("body").asText()).isEqualTo("newer");
        assertThat(again.get("entries").get(0).get("seq").asLong()).isGreaterThan(next);
      });
      // Another device of alice still sees everything
      assertThat(JSON.readTree(get(base + "/v1/users/alice/devices/tablet/sync").body()).get("entries")).hasSize(4);

      // History of the direct chat pages newest first
      JsonNode page = JSON.readTree(get(base + "/v1/conversations/d:alice:bob/messages?limit=1").body());
      assertThat(page.get("entries").get(0).get("body").asText()).isEqualTo("newer");
      assertThat(page.get("hasMore").asBoolean()).isTrue();
      JsonNode older = JSON.readTree(get(base + "/v1/conversations/d:alice:bob/messages?limit=1&before="
          + page.get("next").asLong()).body());
      assertThat(older.get("entries").get(0).get("body").asText()).isEqualTo("hi alice");

      // A scheduled message arrives after its time, a cancelled one never
      String soon = java.time.Instant.now().plusSeconds(3).toString();
      HttpResponse<String> scheduled = send("POST", base + "/v1/messages", "{\"senderId\":\"bob\",\"to\":\"alice\","
          + "\"body\":\"on time\",\"clientMsgId\":\"s1\",\"deliverAt\":\"" + soon + "\"}");
      assertThat(JSON.readTree(scheduled.body()).get("scheduled").asBoolean()).isTrue();
      HttpResponse<String> doomed = send("POST", base + "/v1/messages", "{\"senderId\":\"bob\",\"to\":\"alice\","
          + "\"body\":\"cancelled\",\"clientMsgId\":\"s2\",\"deliverAt\":\"" + soon + "\"}");
      String doomedId = JSON.readTree(doomed.body()).get("messageId").asText();
      assertThat(send("DELETE", base + "/v1/scheduled/" + doomedId, "", "bob").statusCode()).isEqualTo(202);
      long scheduledAt = java.time.Instant.parse(soon).toEpochMilli();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        JsonNode sync = JSON.readTree(get(base + "/v1/users/alice/devices/phone/sync?limit=50").body());
        List<String> bodies = new ArrayList<>();
        sync.get("entries").forEach(e -> bodies.add(e.get("body").asText()));
        assertThat(bodies).containsExactly("newer", "on time");
      });
      // Never early: the delay topology stamps the message with the moment it delivered it, and the fan-out's inbox
      // entries carry that time on
      List<JsonNode> delivered = tail(local, "im.messages", 100, 5).stream()
          .filter(l -> "on time".equals(l.get("value").get("body").asText(null))).toList();
      List<JsonNode> inboxed = tail(local, "im.inbox", 100, 5).stream()
          .filter(l -> "on time".equals(l.get("value").get("body").asText(null))).toList();
      assertThat(delivered).hasSize(1);
      assertThat(inboxed).hasSize(2);
      assertThat(delivered.get(0).get("timestamp").asLong()).as("delivered at").isGreaterThanOrEqualTo(scheduledAt);
      assertThat(inboxed).allSatisfy(l -> assertThat(l.get("timestamp").asLong()).as("inbox entry at")
          .isGreaterThanOrEqualTo(scheduledAt));
    }

    // What the fan-out kept on disk at the clean stop: its tasks' membership stores under the data dir
    Path fanoutState = dataDir.resolve("data").resolve("streams").resolve("im." + FanoutTopology.APP_NAME);
    List<Path> keptStores = membershipStores(fanoutState);
    assertThat(keptStores).as("membership stores on disk after the stop").isNotEmpty();

    // Restart on the same data dir: old records still decode (the registry kept its schemas), Streams state is
    // intact: the apps run on the state they kept on disk (not on a fresh dir restored from the changelogs).
    try (LocalLauncher again = LocalLauncher.start(env, Optional.of(dataDir.resolve("data")), quietLog())) {
      again.awaitHealthy(Duration.ofMinutes(2));
      assertThat(again.runtime().config().stateDir().toAbsolutePath().normalize())
          .isEqualTo(fanoutState.getParent().toAbsolutePath().normalize());
      assertThat(membershipStores(fanoutState)).containsAll(keptStores);
      // im.messages also holds the JOIN control records of the groups joined above: read all of it
      List<JsonNode> messages = tail(again, "im.messages", 500, 5);
      assertThat(messages).extracting(l -> l.get("value").get("messageId").asText()).contains(firstMessageId, "p1");
      String base = again.endpoints().httpUrl();
      // The membership store survived on disk: a new group message reaches alice and bob without re-joining.
      send("POST", base + "/v1/messages",
          "{\"senderId\":\"bob\",\"groupId\":\"team\",\"body\":\"after restart\",\"clientMsgId\":\"c3\"}");
      await().atMost(Duration.ofSeconds(60))
          .untilAsserted(() -> assertThat(tail(again, "im.inbox", 100, 5)).filteredOn(l -> "after restart".equals(
              l.get("value").get("body").asText(null))).extracting(l -> l.get("key").asText())
              .containsExactlyInAnyOrder("alice", "bob"));
    }
  }

  @Test
  void aGroupPushedOverTheThresholdKeepsDeliveringThroughSync() throws Exception {
    Map<String, String> hybrid = new java.util.HashMap<>(env);
    hybrid.put("IM_LARGE_GROUP_THRESHOLD", "2");
    try (LocalLauncher local = LocalLauncher.start(hybrid, Optional.empty(), quietLog())) {
      local.awaitHealthy(Duration.ofMinutes(2));
      String base = local.endpoints().httpUrl();
      // Given a small group {ann, ben} and one message
      send("PUT", base + "/v1/groups/big/members/ann", "");
      send("PUT", base + "/v1/groups/big/members/ben", "");
      post(base, "ann", "before");
      // When cat joins (3, above the threshold of 2) and more is said, the group is read-diffused
      send("PUT", base + "/v1/groups/big/members/cat", "");
      post(base, "ben", "after-1");
      post(base, "cat", "after-2");
      // Then every member's device sync shows every message meant for it, once, in order
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        assertThat(syncedBodies(base, "ann")).containsExactly("before", "after-1", "after-2");
        assertThat(syncedBodies(base, "ben")).containsExactly("before", "after-1", "after-2");
        assertThat(syncedBodies(base, "cat")).containsExactly("after-1", "after-2");
      });
      // And the saved inbox writes show on /metrics
      assertThat(get(base + "/metrics").body()).containsPattern("im_fanout_writes_saved_total [1-9]");
    }
  }

  /** The fan-out's RocksDB membership store directories under its state dir, one per task that has one. */
  private static List<Path> membershipStores(Path appStateDir) throws Exception {
    if (!Files.isDirectory(appStateDir)) {
      return List.of();
    }
    try (var paths = Files.walk(appStateDir)) {
      return paths.filter(p -> Files.isDirectory(p) && p.getFileName().toString().equals(FanoutTopology.MEMBERS_STORE))
          .toList();
    }
  }

  private void post(String base, String from, String body) throws Exception {
    assertThat(send("POST", base + "/v1/messages", "{\"senderId\":\"" + from + "\",\"groupId\":\"big\",\"body\":\""
        + body + "\",\"clientMsgId\":\"" + body + "\"}").statusCode()).isEqualTo(202);
  }

  private List<String> syncedBodies(String base, String user) throws Exception {
    HttpResponse<String> answer = get(base + "/v1/users/" + user + "/devices/d1/sync?limit=100");
    assertThat(answer.statusCode()).as("sync of %s: %s", user, answer.body()).isEqualTo(200);
    JsonNode sync = JSON.readTree(answer.body());
    List<String> bodies = new ArrayList<>();
    sync.get("entries").forEach(e -> {
      if ("MESSAGE".equals(e.get("type").asText())) {
        bodies.add(e.get("body").asText());
      }
    });
    return bodies;
  }

  private Map<String, String> cliEnv() {
    return env; // no KAFKA_BOOTSTRAP_SERVERS: found through the endpoints file, as a second shell would
  }

  private List<JsonNode> tail(LocalLauncher local, String topic, int max) throws Exception {
    return tail(local, topic, max, 20);
  }

  /** {@code bin/im tail TOPIC --from-beginning --max max --timeout idleSeconds}, parsed. */
  private List<JsonNode> tail(LocalLauncher local, String topic, int max, int idleSeconds) throws Exception {
    CliRun tail = CliRun.of(cliEnv(), "tail", topic, "--from-beginning", "--max", Integer.toString(max), "--timeout",
        Integer.toString(idleSeconds));
    assertThat(tail.status()).as("%s", tail.err()).isZero();
    List<JsonNode> lines = new ArrayList<>();
    for (String line : tail.out().split("\n")) {
      if (!line.isBlank()) {
        lines.add(JSON.readTree(line));
      }
    }
    return lines;
  }

  /** Tokens as a second shell gets them: {@code bin/im token USER}, which finds the running instance's secret. */
  private final TestCallers callers = new TestCallers(user -> {
    CliRun token = CliRun.of(cliEnv(), "token", user);
    assertThat(token.status()).as("%s", token.err()).isZero();
    return token.out().trim();
  });

  private HttpResponse<String> get(String url) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url));
    if (url.contains("/v1/")) {
      request.header("Authorization", callers.bearerFor("GET", url, null));
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> send(String method, String url, String body) throws Exception {
    return send(method, url, body, callers.actor(url.replaceFirst("^https?://[^/]+", ""), body));
  }

  private HttpResponse<String> send(String method, String url, String body, String user) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", callers.bearer(user))
        .method(method, body.isEmpty() ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body))
        .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static PrintStream quietLog() {
    return System.out;
  }
}
