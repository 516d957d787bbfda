package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.embedded.Dirs;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/api/openapi.yaml against the real server (every component, real broker and registry): every route the server
 * serves is documented and every documented route is served, and the answers of the main flows (send, inbox, sync,
 * cursor, history, membership, schedules, errors) match the documented schemas.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class OpenApiContractIT {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final OpenApiDocument DOC = OpenApiDocument.read(OpenApiDocument.DEFAULT);
  private static final String S = Long.toString(System.nanoTime() % 1_000_000);
  private static PipelineRuntime runtime;
  private static Path state;
  private static String base;

  @BeforeAll
  static void start() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("openapi") + ".";
    Map<String, String> vars = new HashMap<>(TestTokens.env());
    vars.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "3", "IM_CONVERSATION_PARTITIONS", "3",
        "IM_HTTP_PORT", "0", "IM_HTTP_HOST", "127.0.0.1", "IM_AUTH_DEV_TOKENS", "true"));
    ImConfig config = ImConfig.fromEnv(vars).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    state = TestTmpDir.newDir("openapi-it-");
    runtime = new PipelineRuntime(config.withHttpPort(0, state), vars, topics);
    List<PipelineComponent> all = new ArrayList<>();
    ServiceLoader.load(PipelineComponent.class).forEach(all::add);
    runtime.start(all);
    await().atMost(Duration.ofMinutes(2)).until(runtime::healthy);
    base = "http://127.0.0.1:" + runtime.http().port();
  }

  @AfterAll
  static void stop() {
    if (runtime != null) {
      runtime.close();
    }
    if (state != null) {
      Dirs.deleteRecursively(state);
    }
  }

  @Test
  void everyServedRouteIsDocumentedAndEveryDocumentedRouteIsServed() {
    Set<String> served = new TreeSet<>(runtime.http().routes());
    Set<String> documented = DOC.operations();

    Set<String> undocumented = new TreeSet<>(served);
    undocumented.removeAll(documented);
    Set<String> notServed = new TreeSet<>(documented);
    notServed.removeAll(served);
    assertThat(undocumented).as("served but not in docs/api/openapi.yaml").isEmpty();
    assertThat(notServed).as("in docs/api/openapi.yaml but not served").isEmpty();
  }

  @Test
  void sendInboxSyncCursorAndHistoryAnswerAsDocumented() throws Exception {
    String alice = "alice" + S;
    String bob = "bob" + S;
    // When alice sends bob a message
    JsonNode sent = expect(alice, "POST", "/v1/messages", "/v1/messages",
        "{\"to\":\"" + bob + "\",\"body\":\"hello\",\"clientMsgId\":\"c1\"}", 202);
    String conversation = sent.get("conversationId").asText();

    // Then bob's inbox, his device's sync, its cursor and the conversation's history answer as documented
    awaitAnswer(bob, "/v1/users/{userId}/inbox", "/v1/users/" + bob + "/inbox?after=-1&limit=10",
        page -> page.get("entries").size() == 1);
    JsonNode page = expect(bob, "GET", "/v1/users/{userId}/devices/{deviceId}/sync",
        "/v1/users/" + bob + "/devices/phone/sync?limit=10", null, 200);
    assertThat(page.get("entries")).hasSize(1);
    expect(bob, "PUT", "/v1/users/{userId}/devices/{deviceId}/cursor", "/v1/users/" + bob + "/devices/phone/cursor",
        "{\"cursor\":\"" + page.get("cursor").asText() + "\"}", 202);
    JsonNode cursor = expect(bob, "GET", "/v1/users/{userId}/devices/{deviceId}/cursor",
        "/v1/users/" + bob + "/devices/phone/cursor", null, 200);
    assertThat(cursor.get("seq").asLong()).isEqualTo(page.get("next").asLong());
    awaitAnswer(alice, "/v1/conversations/{conversationId}/messages",
        "/v1/conversations/" + enc(conversation) + "/messages?limit=5", history -> history.get("entries").size() == 1);

    // and a read marker and a recall are accepted as documented
    expect(bob, "POST", "/v1/read", "/v1/read", "{\"to\":\"" + alice + "\",\"upToSeq\":0}", 202);
    expect(alice, "POST", "/v1/recall", "/v1/recall",
        "{\"to\":\"" + bob + "\",\"messageId\":\"" + sent.get("messageId").asText() + "\"}", 202);
  }

  @Test
  void groupsSchedulesAndHistoryAccessAnswerAsDocumented() throws Exception {
    String carol = "carol" + S;
    String dave = "dave" + S;
    String group = "g" + S;
    // When carol creates a group, adds dave, posts to it and removes dave again
    expect(carol, "PUT", "/v1/groups/{groupId}/members/{userId}", "/v1/groups/" + group + "/members/" + carol, null,
        202);
    expect(carol, "PUT", "/v1/groups/{groupId}/members/{userId}", "/v1/groups/" + group + "/members/" + dave, null,
        202);
    expect(carol, "POST", "/v1/messages", "/v1/messages",
        "{\"groupId\":\"" + group + "\",\"body\":\"hi all\",\"clientMsgId\":\"g1\"}", 202);
    expect(carol, "DELETE", "/v1/groups/{groupId}/members/{userId}", "/v1/groups/" + group + "/members/" + dave,
        null, 202);

    // Then her access to and the history of the group answer as documented
    awaitAnswer(carol, "/v1/conversations/{conversationId}/messages", "/v1/conversations/" + group + "/messages",
        history -> history.get("entries").size() == 1);
    expect(carol, "GET", "/v1/users/{userId}/conversations/{conversationId}/access",
        "/v1/users/" + carol + "/conversations/" + group + "/access", null, 200);

    // and a message scheduled for tomorrow can be cancelled
    String tomorrow =
        java.time.Instant.now().plus(Duration.ofDays(1)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
            .toString();
    JsonNode scheduled = expect(carol, "POST", "/v1/messages", "/v1/messages", "{\"groupId\":\"" + group
        + "\",\"body\":\"later\",\"clientMsgId\":\"g2\",\"deliverAt\":\"" + tomorrow + "\"}", 202);
    assertThat(scheduled.get("scheduled").asBoolean()).isTrue();
    expect(carol, "DELETE", "/v1/scheduled/{messageId}", "/v1/scheduled/" + scheduled.get("messageId").asText(),
        null, 202);
  }

  @Test
  void errorsAndSystemRoutesAnswerAsDocumented() throws Exception {
    String erin = "erin" + S;
    // no token: 401; someone else's inbox: 403; a limit out of range: 400; a cursor beyond the inbox: 409
    HttpResponse<String> none = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/v1/users/" + erin + "/inbox"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(none.statusCode()).isEqualTo(401);
    assertThat(none.headers().firstValue("WWW-Authenticate")).isPresent();
    assertValid("GET", "/v1/users/{userId}/inbox", 401, Json.MAPPER.readTree(none.body()));
    expect(erin, "GET", "/v1/users/{userId}/inbox", "/v1/users/someone-else/inbox", null, 403);
    expect(erin, "GET", "/v1/users/{userId}/inbox", "/v1/users/" + erin + "/inbox?limit=0", null, 400);
    expect(erin, "POST", "/v1/messages", "/v1/messages", "{\"to\":\"x\",\"body\":\"b\",\"clientMsgId\":\"c\","
        + "\"colour\":\"red\"}", 400);
    expect(erin, "PUT", "/v1/users/{userId}/devices/{deviceId}/cursor", "/v1/users/" + erin + "/devices/d/cursor",
        "{\"seq\":1000000}", 409);

    // the system routes need no token
    assertValid("GET", "/health", 200, Json.MAPPER.readTree(get("/health").body()));
    assertValid("GET", "/health/live", 200, Json.MAPPER.readTree(get("/health/live").body()));
    HttpResponse<String> metrics = get("/metrics");
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.body()).contains("im_http_connections");
    HttpResponse<String> token = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/dev/token"))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"user\":\"" + erin
            + "\"}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(token.statusCode()).isEqualTo(200);
    assertValid("POST", "/dev/token", 200, Json.MAPPER.readTree(token.body()));
  }

  @Test
  void theDeviceConnectionsFramesAreTheOnesAsyncApiDescribes() throws Exception {
    String gina = "gina" + S;
    String hank = "hank" + S;
    AsyncApiFrames frames = new AsyncApiFrames(AsyncApiFrames.DEFAULT);
    // Given a message to gina in her inbox
    expect(hank, "POST", "/v1/messages", "/v1/messages",
        "{\"to\":\"" + gina + "\",\"body\":\"hi\",\"clientMsgId\":\"w0\"}", 202);
    awaitAnswer(gina, "/v1/users/{userId}/inbox", "/v1/users/" + gina + "/inbox", p -> p.get("entries").size() == 1);

    // When her tablet connects, Then the backlog's entry and "synced" arrive as documented
    java.util.concurrent.BlockingQueue<JsonNode> received = new java.util.concurrent.LinkedBlockingQueue<>();
    java.net.http.WebSocket socket = HTTP.newWebSocketBuilder().header("Authorization", "Bearer "
        + TestTokens.token(gina)).buildAsync(URI.create(base.replace("http:", "ws:") + "/v1/ws?device=tablet"),
            new java.net.http.WebSocket.Listener() {
              private final StringBuilder text = new StringBuilder();

              @Override
              public java.util.concurrent.CompletionStage<?> onText(java.net.http.WebSocket ws, CharSequence data,
                  boolean last) {
                text.append(data);
                if (last) {
                  try {
                    received.add(Json.MAPPER.readTree(text.toString()));
                  } catch (java.io.IOException e) {
                    received.add(Json.MAPPER.createObjectNode().put("type", "unparseable: " + text));
                  }
                  text.setLength(0);
                }
                ws.request(1);
                return null;
              }
            })
        .get(30, TimeUnit.SECONDS);
    try {
      JsonNode entry = nextFrame(received, frames);
      assertThat(entry.path("type").asText()).isEqualTo("entry");
      assertThat(entry.at("/entry/body").asText()).isEqualTo("hi");
      assertThat(nextFrame(received, frames).path("type").asText()).isEqualTo("synced");

      // and the device's ack, ping, send and a frame of no known type are answered as documented
      for (String frame : List.of("{\"type\":\"ack\",\"cursor\":\"" + entry.path("cursor").asText() + "\"}",
          "{\"type\":\"ping\"}",
          "{\"type\":\"send\",\"to\":\"" + hank + "\",\"body\":\"back\",\"clientMsgId\":\"w1\"}")) {
        assertThat(frames.check(Json.MAPPER.readTree(frame))).as(frame).isEmpty();
        socket.sendText(frame, true).get(10, TimeUnit.SECONDS);
      }
      socket.sendText("{\"type\":\"shout\"}", true).get(10, TimeUnit.SECONDS);
      // (her own message also reaches her devices as a live entry, in any order with the answers)
      Set<String> answers = new TreeSet<>();
      for (int i = 0; i < 10 && !answers.containsAll(List.of("pong", "sent", "error")); i++) {
        answers.add(nextFrame(received, frames).path("type").asText());
      }
      assertThat(answers).contains("pong", "sent", "error");
    } finally {
      socket.abort();
    }
  }

  /** The next frame from the server (waiting up to 30 s), checked against the document. */
  private static JsonNode nextFrame(java.util.concurrent.BlockingQueue<JsonNode> received, AsyncApiFrames frames)
      throws InterruptedException {
    JsonNode frame = received.poll(30, TimeUnit.SECONDS);
    assertThat(frame).as("a frame within 30 s").isNotNull();
    assertThat(frames.check(frame)).as("%s", frame).isEmpty();
    return frame;
  }

  @Test
  void everyPipelineMetricIsDocumentedAndPassesPromtool() throws Exception {
    // Given what /metrics serves once the main flows have run
    expect("frank" + S, "GET", "/v1/users/{userId}/inbox", "/v1/users/frank" + S + "/inbox", null, 200);
    String scrape = get("/metrics").body();
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target", "metrics-scrape.txt"), scrape, StandardCharsets.UTF_8);

    // Then every im_* family is in docs/reference/metrics.md
    Set<String> families = new TreeSet<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^# TYPE (im_[a-z0-9_]+) ").matcher(scrape);
    while (m.find()) {
      families.add(m.group(1));
    }
    assertThat(families).isNotEmpty();
    String doc = Files.readString(Path.of("..", "docs", "reference", "metrics.md"), StandardCharsets.UTF_8);
    assertThat(families.stream().filter(f -> !doc.contains("`" + f + "`")).toList())
        .as("served by /metrics but not in docs/reference/metrics.md").isEmpty();

    // and, where promtool is installed, none of them breaks its naming rules
    List<String> problems = Promtool.checkMetrics(scrape);
    org.junit.jupiter.api.Assumptions.assumeTrue(problems != null, "promtool not installed");
    assertThat(problems.stream().filter(line -> line.startsWith("im_")).toList()).as("promtool check metrics")
        .isEmpty();
  }

  /**
   * Calls {@code path} (an instance of {@code template}) as {@code user}, checks the request body against the
   * documented one (unless the call is meant to fail), then the status and the answer against the documented answer; returns the answer's JSON.
   */
  private static JsonNode expect(String user, String method, String template, String path, String body, int status)
      throws Exception {
    if (body != null && status < 400) {
      assertThat(DOC.checkRequest(method, template, Json.MAPPER.readTree(body))).as("request of %s %s", method,
          template).isEmpty();
    }
    HttpResponse<String> response = call(user, method, path, body);
    assertThat(response.statusCode()).as("%s %s: %s", method, path, response.body()).isEqualTo(status);
    if (response.body().isEmpty()) {
      assertThat(DOC.root().at("/paths/" + template.replace("/", "~1") + "/" + method.toLowerCase(java.util.Locale.ROOT)
          + "/responses/" + status + "/content").isMissingNode()).as("%s %s %d has no body", method, template, status)
          .isTrue();
      return Json.MAPPER.createObjectNode();
    }
    JsonNode json = Json.MAPPER.readTree(response.body());
    assertValid(method, template, status, json);
    return json;
  }

  /** Polls {@code GET path} until it answers 200 with a body {@code ready} accepts, then checks it as documented. */
  private static JsonNode awaitAnswer(String user, String template, String path,
      java.util.function.Predicate<JsonNode> ready) throws Exception {
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      HttpResponse<String> r = call(user, "GET", path, null);
      return r.statusCode() == 200 && ready.test(Json.MAPPER.readTree(r.body()));
    });
    return expect(user, "GET", template, path, null, 200);
  }

  private static HttpResponse<String> call(String user, String method, String path, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + TestTokens.token(user))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void assertValid(String method, String template, int status, JsonNode json) {
    assertThat(DOC.checkResponse(method, template, status, json)).as("%s %s %d: %s", method, template, status, json)
        .isEmpty();
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
