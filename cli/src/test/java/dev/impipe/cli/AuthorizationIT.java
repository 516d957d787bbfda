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
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every rule of "Identity and authorization" through the whole pipeline on the real broker, in both directions:
 * what a user may do works, what they may not is refused (401 / 403 / 409 at the edge), and what only the owning
 * topology can decide is refused there, with a REJECTED entry in the actor's own sync and the reason in the
 * rejected topic.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class AuthorizationIT {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static PipelineRuntime runtime;
  private static String rejectedTopic;
  private static Path state;
  private static String base;
  private static final String S = Long.toString(System.nanoTime() % 1_000_000);

  @BeforeAll
  static void start() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("authz") + ".";
    Map<String, String> vars = new HashMap<>(TestTokens.env());
    vars.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "3", "IM_CONVERSATION_PARTITIONS", "3",
        "IM_HTTP_PORT", "0"));
    ImConfig config = ImConfig.fromEnv(vars).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    rejectedTopic = names.rejected();
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    state = TestTmpDir.newDir("authz-it-");
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
  void aTokenThatIsMissingExpiredForgedOrUnsignedIs401() throws Exception {
    String user = "u" + S;
    HttpResponse<String> none = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/v1/users/" + user + "/inbox"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(none.statusCode()).isEqualTo(401);
    assertThat(none.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v)
        .startsWith("Bearer"));
    for (String bad : List.of(TestTokens.expired(user), TestTokens.signedWithOtherKey(user),
        TestTokens.unsigned(user), "not.a.jwt")) {
      assertThat(call(bad, "GET", "/v1/users/" + user + "/inbox", null).statusCode()).isEqualTo(401);
    }
    assertThat(call(TestTokens.token(user), "GET", "/v1/users/" + user + "/inbox", null).statusCode())
        .isEqualTo(200);
  }

  @Test
  void aUserActsAndReadsOnlyAsThemselves() throws Exception {
    String alice = "alice" + S;
    String bob = "bob" + S;
    String ta = TestTokens.token(alice);
    // allowed: own send (sender from the token), own inbox, own device cursor
    assertThat(call(ta, "POST", "/v1/messages", "{\"to\":\"" + bob + "\",\"body\":\"hi\",\"clientMsgId\":\"c1\"}")
        .statusCode()).isEqualTo(202);
    assertThat(call(ta, "GET", "/v1/users/" + alice + "/inbox", null).statusCode()).isEqualTo(200);
    assertThat(call(ta, "GET", "/v1/users/" + alice + "/devices/phone/cursor", null).statusCode()).isEqualTo(200);
    // refused: a forged senderId, someone else's inbox, sync and cursor, a group timeline
    assertThat(call(ta, "POST", "/v1/messages", "{\"senderId\":\"" + bob + "\",\"to\":\"" + alice
        + "\",\"body\":\"forged\",\"clientMsgId\":\"c2\"}").statusCode()).isEqualTo(403);
    assertThat(call(ta, "GET", "/v1/users/" + bob + "/inbox", null).statusCode()).isEqualTo(403);
    assertThat(call(ta, "GET", "/v1/users/" + bob + "/devices/laptop/sync", null).statusCode()).isEqualTo(403);
    assertThat(call(ta, "GET", "/v1/users/" + bob + "/devices/laptop/cursor", null).statusCode()).isEqualTo(403);
    assertThat(call(ta, "PUT", "/v1/users/" + bob + "/devices/laptop/cursor", "{\"seq\":1}").statusCode())
        .isEqualTo(403);
    assertThat(call(ta, "GET", "/v1/users/%23team/inbox", null).statusCode()).isEqualTo(403);
    // a device token speaks only for its device
    String phone = TestTokens.token(alice, "phone");
    assertThat(call(phone, "GET", "/v1/users/" + alice + "/devices/tablet/sync", null).statusCode())
        .isEqualTo(403);
    // the direct conversation's history: its two parties only
    String direct = "d:" + (alice.compareTo(bob) < 0 ? alice + ":" + bob : bob + ":" + alice);
    assertThat(call(ta, "GET", "/v1/conversations/" + direct + "/messages", null).statusCode()).isEqualTo(200);
    assertThat(call(TestTokens.token("eve" + S), "GET", "/v1/conversations/" + direct + "/messages", null)
        .statusCode()).isEqualTo(403);
  }

  @Test
  void aCursorBeyondTheInboxIs409AndOneWithinIsStored() throws Exception {
    String carol = "carol" + S;
    String tc = TestTokens.token(carol);
    assertThat(call(TestTokens.token("dan" + S), "POST", "/v1/messages", "{\"to\":\"" + carol
        + "\",\"body\":\"x\",\"clientMsgId\":\"c1\"}").statusCode()).isEqualTo(202);
    JsonNode page = awaitSync(carol, "phone", e -> "MESSAGE".equals(e.get("type").asText()));
    long next = page.get("next").asLong();
    HttpResponse<String> beyond = call(tc, "PUT", "/v1/users/" + carol + "/devices/phone/cursor",
        "{\"seq\":9223372036854775000}");
    assertThat(beyond.statusCode()).isEqualTo(409);
    assertThat(call(tc, "PUT", "/v1/users/" + carol + "/devices/phone/cursor", "{\"seq\":" + next + "}")
        .statusCode()).isEqualTo(202);
    assertThat(Json.MAPPER.readTree(call(tc, "GET", "/v1/users/" + carol + "/devices/phone/cursor", null).body())
        .get("seq").asLong()).isEqualTo(next);
  }

  @Test
  void groupRulesAreTakenInOrderByTheFanOutAndARefusalReachesTheActor() throws Exception {
    String g = "g" + S;
    String admin = "ann" + S;
    String member = "ben" + S;
    String late = "lea" + S;
    String stranger = "sam" + S;
    String ta = TestTokens.token(admin);
    String tb = TestTokens.token(member);
    // the creator joins (and is admin), adds a member: allowed
    assertThat(call(ta, "PUT", "/v1/groups/" + g + "/members/" + admin, null).statusCode()).isEqualTo(202);
    assertThat(call(ta, "PUT", "/v1/groups/" + g + "/members/" + member, null).statusCode()).isEqualTo(202);
    awaitSync(member, "phone", e -> "CONVERSATION_JOINED".equals(e.get("type").asText()));
    assertThat(call(ta, "POST", "/v1/messages", "{\"groupId\":\"" + g + "\",\"body\":\"before lea\","
        + "\"clientMsgId\":\"m1\"}").statusCode()).isEqualTo(202);
    awaitSync(member, "phone", e -> "before lea".equals(e.path("body").asText()));

    // a non-admin adding someone: accepted at the edge (202), refused by the fan-out, told to the actor
    assertThat(call(tb, "PUT", "/v1/groups/" + g + "/members/" + stranger, null).statusCode()).isEqualTo(202);
    JsonNode refusal = awaitEntry(member, "phone", e -> "REJECTED".equals(e.get("type").asText())
        && "JOIN".equals(e.path("rejectedOp").asText()));
    assertThat(refusal.get("reasonCode").asText()).isEqualTo("NOT_ADMIN");
    assertThat(refusal.get("targetUserId").asText()).isEqualTo(stranger);
    assertThat(rejectedReasons()).anySatisfy(r -> assertThat(r).contains(member).contains("admin"));
    // and the stranger is not a member: not told of the group, no history
    assertThat(call(TestTokens.token(stranger), "GET", "/v1/conversations/" + g + "/messages", null).statusCode())
        .isEqualTo(403);

    // a late joiner reads history only from their join
    assertThat(call(ta, "PUT", "/v1/groups/" + g + "/members/" + late, null).statusCode()).isEqualTo(202);
    awaitSync(late, "phone", e -> "CONVERSATION_JOINED".equals(e.get("type").asText()));
    assertThat(call(ta, "POST", "/v1/messages", "{\"groupId\":\"" + g + "\",\"body\":\"after lea\","
        + "\"clientMsgId\":\"m2\"}").statusCode()).isEqualTo(202);
    awaitSync(late, "phone", e -> "after lea".equals(e.path("body").asText()));
    // History is the group's timeline, applied apart from the inbox: the entry in lea's inbox does not mean it is
    // there yet.
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      List<String> lateHistory = bodies(call(TestTokens.token(late), "GET", "/v1/conversations/" + g
          + "/messages?limit=100", null));
      assertThat(lateHistory).contains("after lea").doesNotContain("before lea");
      assertThat(bodies(call(ta, "GET", "/v1/conversations/" + g + "/messages?limit=100", null)))
          .contains("before lea", "after lea");
    });

    // a recall by someone other than the sender: refused, told to the recaller
    String messageId = Json.MAPPER.readTree(call(ta, "POST", "/v1/messages", "{\"groupId\":\"" + g
        + "\",\"body\":\"keep\",\"clientMsgId\":\"m3\"}").body()).get("messageId").asText();
    assertThat(call(tb, "POST", "/v1/recall", "{\"groupId\":\"" + g + "\",\"messageId\":\"" + messageId + "\"}")
        .statusCode()).isEqualTo(202);
    JsonNode recall = awaitEntry(member, "phone", e -> "REJECTED".equals(e.get("type").asText())
        && "RECALL".equals(e.path("rejectedOp").asText()));
    assertThat(recall.get("reasonCode").asText()).isEqualTo("NOT_SENDER");
  }

  @Test
  void aScheduleIsCancelledOnlyByItsSender() throws Exception {
    String sender = "sue" + S;
    String other = "oz" + S;
    String deliverAt = Instant.now().plusSeconds(120).toString();
    String messageId = Json.MAPPER.readTree(call(TestTokens.token(sender), "POST", "/v1/messages", "{\"to\":\""
        + other + "\",\"body\":\"later\",\"clientMsgId\":\"s1\",\"deliverAt\":\"" + deliverAt + "\"}").body())
        .get("messageId").asText();
    assertThat(call(TestTokens.token(other), "DELETE", "/v1/scheduled/" + messageId, null).statusCode())
        .isEqualTo(202);
    JsonNode refusal = awaitEntry(other, "phone", e -> "REJECTED".equals(e.get("type").asText())
        && "CANCEL".equals(e.path("rejectedOp").asText()));
    assertThat(refusal.get("reasonCode").asText()).isEqualTo("NOT_SENDER");
    assertThat(refusal.get("messageId").asText()).isEqualTo(messageId);
    assertThat(call(TestTokens.token(sender), "DELETE", "/v1/scheduled/" + messageId, null).statusCode())
        .isEqualTo(202);
  }

  // ---------------------------------------------------------------------------------------------------------------

  private static HttpResponse<String> call(String token, String method, String path, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + token)
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Polls the device's sync until an entry matches; returns the page. */
  private static JsonNode awaitSync(String user, String device, java.util.function.Predicate<JsonNode> match) {
    JsonNode[] found = new JsonNode[1];
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      HttpResponse<String> r = call(TestTokens.token(user), "GET", "/v1/users/" + user + "/devices/" + device
          + "/sync?limit=1000", null);
      if (r.statusCode() != 200) {
        return false;
      }
      JsonNode page = Json.MAPPER.readTree(r.body());
      for (JsonNode e : page.get("entries")) {
        if (match.test(e)) {
          found[0] = page;
          return true;
        }
      }
      return false;
    });
    return found[0];
  }

  private static JsonNode awaitEntry(String user, String device, java.util.function.Predicate<JsonNode> match) {
    for (JsonNode e : awaitSync(user, device, match).get("entries")) {
      if (match.test(e)) {
        return e;
      }
    }
    throw new AssertionError("unreachable");
  }

  private static List<String> bodies(HttpResponse<String> history) throws Exception {
    assertThat(history.statusCode()).as(history.body()).isEqualTo(200);
    List<String> out = new ArrayList<>();
    Json.MAPPER.readTree(history.body()).get("entries").forEach(e -> out.add(e.path("body").asText()));
    return out;
  }

  /** The reason headers of everything in the rejected topic so far. */
  private static List<String> rejectedReasons() {
    Map<String, Object> props = new HashMap<>(runtime.config().clientProperties());
    props.put("group.id", "authz-it-" + System.nanoTime());
    props.put("auto.offset.reset", "earliest");
    props.put("isolation.level", "read_committed");
    List<String> reasons = new ArrayList<>();
    await().atMost(Duration.ofSeconds(30)).until(() -> {
      try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
          new ByteArrayDeserializer())) {
        consumer.subscribe(List.of(rejectedTopic));
        reasons.clear();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < end) {
          for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
            Header h = r.headers().lastHeader("__streams.errors.message");
            if (h != null) {
              reasons.add(new String(h.value(), StandardCharsets.UTF_8));
            }
          }
          if (!reasons.isEmpty()) {
            return true;
          }
        }
        return false;
      }
    });
    return reasons;
  }
}
