package dev.impipe.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.Json;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.ZoneOffset;
import dev.impipe.edge.auth.AuthException;
import dev.impipe.edge.auth.Principal;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class IngestRoutesTest {

  private final HttpClient client = HttpClient.newHttpClient();
  private String registryUrl;
  private MockProducer<String, byte[]> producer;
  private HttpApi http;

  @BeforeEach
  void setUp() throws Exception {
    registryUrl = "mock://routes-" + UUID.randomUUID();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    producer = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
    MessagePublisher publisher = new MessagePublisher(topics, IngestConfig.defaults(),
        Clock.fixed(MessagePublisherTest.NOW, ZoneOffset.UTC), producer);
    http = authenticated(new HttpApi("127.0.0.1", 0));
    new IngestRoutes(publisher, IngestConfig.defaults(), new SimpleMeterRegistry()).register(http);
    http.start();
  }

  /** Tokens in these tests are {@code user} or {@code user/device}; "expired" is refused. */
  private static HttpApi authenticated(HttpApi api) {
    return api.authenticate("/v1/", token -> {
      if (token.equals("expired")) {
        throw new AuthException("token expired");
      }
      String[] parts = token.split("/");
      return new Principal(parts[0], parts.length > 1 ? Optional.of(parts[1]) : Optional.empty(),
          Instant.now().plusSeconds(60), token);
    });
  }

  @AfterEach
  void tearDown() {
    http.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void postMessageAnswers202WithIds() throws Exception {
    HttpResponse<String> r = call("POST", "/v1/messages",
        "{\"senderId\":\"bob\",\"to\":\"alice\",\"body\":\"hi\",\"clientMsgId\":\"c1\"}");
    assertThat(r.statusCode()).isEqualTo(202);
    JsonNode body = Json.MAPPER.readTree(r.body());
    assertThat(body.get("messageId").asText()).isEqualTo(MessagePublisher.messageId("bob", "d:alice:bob", "c1"));
    assertThat(body.get("conversationId").asText()).isEqualTo("d:alice:bob");
    assertThat(body.get("scheduled").asBoolean()).isFalse();
    assertThat(producer.history()).hasSize(1);
  }

  @Test
  void scheduledMessageSaysSo() throws Exception {
    HttpResponse<String> r = call("POST", "/v1/messages", "{\"senderId\":\"bob\",\"groupId\":\"g1\",\"body\":\"hi\","
        + "\"clientMsgId\":\"c1\",\"deliverAt\":\"2026-11-22T11:00:00Z\"}");
    assertThat(r.statusCode()).isEqualTo(202);
    assertThat(Json.MAPPER.readTree(r.body()).get("scheduled").asBoolean()).isTrue();
    assertThat(producer.history().get(0).topic()).isEqualTo("im.delayed");
  }

  @Test
  void badRequestsGet400WithAReasonAndNothingIsPublished() throws Exception {
    assertError(call("POST", "/v1/messages", "{\"senderId\":\"bob\",\"body\":\"hi\",\"clientMsgId\":\"c1\"}"),
        400, "exactly one of 'to' and 'groupId'");
    assertError(call("POST", "/v1/messages", "{\"senderId\":\"bob\",\"to\":\"al\",\"body\":\"hi\",\"clientMsgId\":"
        + "\"c1\",\"colour\":\"red\"}"), 400, "unknown field 'colour'");
    assertError(call("POST", "/v1/messages", "{\"senderId\":"), 400, "malformed JSON");
    assertError(call("POST", "/v1/messages", "{\"senderId\":7,\"to\":\"al\",\"body\":\"hi\",\"clientMsgId\":\"c\"}"),
        400, "'senderId' must be a string");
    assertError(call("POST", "/v1/messages", "{\"senderId\":\"bob\",\"to\":\"al\",\"body\":\"hi\",\"clientMsgId\":"
        + "\"c\",\"deliverAt\":\"tomorrow\"}"), 400, "ISO-8601");
    assertError(call("PUT", "/v1/groups/g%3A1/members/alice", ""), 400, "groupId 'g:1' is not a valid id");
    assertError(call("POST", "/v1/read", "{\"userId\":\"bob\",\"to\":\"al\"}"), 400, "upToSeq");
    assertThat(producer.history()).isEmpty();
  }

  @Test
  void membershipAndCancelAnswer202AndMembershipGoesIntoTheGroupsLog() throws Exception {
    assertThat(call("PUT", "/v1/groups/g1/members/alice", "").statusCode()).isEqualTo(202);
    assertThat(call("DELETE", "/v1/groups/g1/members/alice", "").statusCode()).isEqualTo(202);
    assertThat(call("DELETE", "/v1/scheduled/m42", "").statusCode()).isEqualTo(202);
    assertThat(producer.history()).extracting(r -> r.topic())
        .containsExactly("im.messages", "im.messages", "im.delayed");
  }

  @Test
  void kafkaFailureIs503AndSaysNothingWasPublished() throws Exception {
    producer = null;
    MockProducer<String, byte[]> failing = new MockProducer<>(false, null, new StringSerializer(),
        new ByteArraySerializer());
    http.close();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    http = authenticated(new HttpApi("127.0.0.1", 0));
    new IngestRoutes(new MessagePublisher(topics, IngestConfig.defaults(),
        Clock.fixed(MessagePublisherTest.NOW, ZoneOffset.UTC), failing), IngestConfig.defaults(),
        new SimpleMeterRegistry()).register(http);
    http.start();
    java.util.concurrent.CompletableFuture<HttpResponse<String>> pending = client.sendAsync(
        request("PUT", "/v1/groups/g1/members/alice", ""), HttpResponse.BodyHandlers.ofString());
    org.awaitility.Awaitility.await().until(() -> !failing.history().isEmpty());
    failing.errorNext(new org.apache.kafka.common.errors.TimeoutException("broker down"));
    HttpResponse<String> answer = pending.get();
    assertError(answer, 503, "not published");
    assertThat(answer.headers().firstValue("Retry-After")).hasValue("1");
    // Kafka's own error text stays in the log.
    assertThat(answer.body()).doesNotContain("broker down");
  }

  @Test
  void noAcknowledgementWithinThePublishTimeoutIs503WithRetryAfter() throws Exception {
    MockProducer<String, byte[]> silent = new MockProducer<>(false, null, new StringSerializer(),
        new ByteArraySerializer());
    http.close();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    IngestConfig shortTimeout = IngestConfig.fromEnv(Map.of("IM_PUBLISH_TIMEOUT", "1s"));
    http = authenticated(new HttpApi("127.0.0.1", 0));
    new IngestRoutes(new MessagePublisher(topics, shortTimeout, Clock.fixed(MessagePublisherTest.NOW,
        ZoneOffset.UTC), silent), shortTimeout, new SimpleMeterRegistry()).register(http);
    http.start();

    HttpResponse<String> answer = call("POST", "/v1/messages", "{\"to\":\"alice\",\"body\":\"hi\","
        + "\"clientMsgId\":\"c1\"}");

    assertError(answer, 503, "not published within 1000 ms");
    assertThat(answer.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(silent.history()).hasSize(1);
  }

  @Test
  void theCallerIsTheTokensUserNeverTheBodys() throws Exception {
    // Omitted: taken from the token.
    HttpResponse<String> own = call("POST", "/v1/messages", "{\"to\":\"alice\",\"body\":\"hi\","
        + "\"clientMsgId\":\"c9\"}");
    assertThat(own.statusCode()).isEqualTo(202);
    assertThat(Json.MAPPER.readTree(own.body()).get("messageId").asText())
        .isEqualTo(MessagePublisher.messageId("bob", "d:alice:bob", "c9"));
    // Someone else's id: refused, nothing published.
    int before = producer.history().size();
    assertError(call("POST", "/v1/messages", "{\"senderId\":\"alice\",\"to\":\"carol\",\"body\":\"forged\","
        + "\"clientMsgId\":\"c10\"}"), 403, "senderId");
    assertError(call("POST", "/v1/read", "{\"userId\":\"alice\",\"to\":\"carol\",\"upToSeq\":3}"), 403, "userId");
    assertError(call("POST", "/v1/recall", "{\"senderId\":\"alice\",\"to\":\"carol\",\"messageId\":\"m1\"}"),
        403, "senderId");
    // A device token speaks only for its device.
    assertError(call("bob/phone", "POST", "/v1/messages", "{\"senderDeviceId\":\"laptop\",\"to\":\"alice\","
        + "\"body\":\"hi\",\"clientMsgId\":\"c11\"}"), 403, "senderDeviceId");
    assertThat(producer.history()).hasSize(before);
  }

  @Test
  void withoutAValidTokenEveryRouteIs401() throws Exception {
    for (String[] route : new String[][] {{"POST", "/v1/messages"}, {"POST", "/v1/read"}, {"POST", "/v1/recall"},
        {"PUT", "/v1/groups/g1/members/bob"}, {"DELETE", "/v1/groups/g1/members/bob"},
        {"DELETE", "/v1/scheduled/m1"}}) {
      HttpResponse<String> none = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port()
          + route[1])).method(route[0], HttpRequest.BodyPublishers.ofString("{}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(none.statusCode()).as(route[0] + " " + route[1]).isEqualTo(401);
      assertThat(none.headers().firstValue("WWW-Authenticate")).isPresent();
      assertError(call("expired", route[0], route[1], "{}"), 401, "token expired");
    }
    assertThat(producer.history()).isEmpty();
  }

  @Test
  void overAQuotaIs429WithRetryAfterAndNothingIsPublishedWhileOtherUsersPass() throws Exception {
    // Given bursts of 2 sends, 1 group creation and 2 membership requests, on a clock that stands still
    http.close();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    IngestConfig tight = IngestConfig.fromEnv(Map.of("IM_QUOTA_SENDS_BURST", "2", "IM_QUOTA_GROUPS_BURST", "1",
        "IM_QUOTA_MEMBERSHIP_BURST", "2"));
    SimpleMeterRegistry metrics = new SimpleMeterRegistry();
    http = authenticated(new HttpApi("127.0.0.1", 0));
    new IngestRoutes(new MessagePublisher(topics, tight, Clock.fixed(MessagePublisherTest.NOW, ZoneOffset.UTC),
        producer), tight, metrics, () -> 7L).register(http);
    http.start();
    String message = "{\"to\":\"alice\",\"body\":\"hi\",\"clientMsgId\":\"c1\"}";
    assertThat(call("POST", "/v1/messages", message).statusCode()).isEqualTo(202);
    assertThat(call("POST", "/v1/read", "{\"to\":\"alice\",\"upToSeq\":1}").statusCode()).isEqualTo(202);

    // When bob sends a third time, reads or recalls, or cancels a schedule
    HttpResponse<String> refused = call("POST", "/v1/messages", message);

    // Then 429 with the rule and when to retry; the others draw from the same quota
    assertError(refused, 429, "too many sends: at most 20 per second (bursts of 2) per user; retry in 1 s");
    assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
    assertError(call("POST", "/v1/recall", "{\"to\":\"alice\",\"messageId\":\"m1\"}"), 429, "too many sends");
    assertError(call("DELETE", "/v1/scheduled/m1", ""), 429, "too many sends");
    assertThat(producer.history()).hasSize(2);
    // And alice, on the same instance in the same instant, is not affected
    assertThat(call("alice", "POST", "/v1/messages", "{\"to\":\"bob\",\"body\":\"hi\",\"clientMsgId\":\"c1\"}")
        .statusCode()).isEqualTo(202);

    // A JOIN of oneself (could create a group) draws from the group creations too; adding someone does not
    assertThat(call("PUT", "/v1/groups/g1/members/bob", "").statusCode()).isEqualTo(202);
    assertError(call("PUT", "/v1/groups/g2/members/bob", ""), 429, "too many JOINs of yourself");
    assertThat(call("PUT", "/v1/groups/g1/members/carol", "").statusCode()).isEqualTo(202);
    assertError(call("DELETE", "/v1/groups/g1/members/carol", ""), 429, "too many membership requests");
    assertThat(producer.history()).hasSize(5);
    assertThat(metrics.get("im.ingest.throttled").tag("quota", "sends").counter().count()).isEqualTo(3);
    assertThat(metrics.get("im.ingest.throttled").tag("quota", "groups").counter().count()).isEqualTo(1);
    assertThat(metrics.get("im.ingest.quota.users").tag("quota", "sends").gauge().value()).isEqualTo(2);
  }

  @Test
  void aScheduledMessageIsAlsoASend() throws Exception {
    http.close();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    IngestConfig tight = IngestConfig.fromEnv(Map.of("IM_QUOTA_SCHEDULES_BURST", "1", "IM_QUOTA_SENDS_BURST", "2"));
    http = authenticated(new HttpApi("127.0.0.1", 0));
    new IngestRoutes(new MessagePublisher(topics, tight, Clock.fixed(MessagePublisherTest.NOW, ZoneOffset.UTC),
        producer), tight, new SimpleMeterRegistry(), () -> 7L).register(http);
    http.start();
    String later = "{\"groupId\":\"g1\",\"body\":\"hi\",\"clientMsgId\":\"c1\","
        + "\"deliverAt\":\"2026-11-22T11:00:00Z\"}";
    assertThat(call("POST", "/v1/messages", later).statusCode()).isEqualTo(202);
    HttpResponse<String> second = call("POST", "/v1/messages", later);
    assertError(second, 429, "too many scheduled messages: at most 200 per day (bursts of 1)");
    assertThat(second.headers().firstValue("Retry-After")).hasValue("432");
    // The refused schedule took no send: one plain send is left
    assertThat(call("POST", "/v1/messages", "{\"to\":\"al\",\"body\":\"hi\",\"clientMsgId\":\"c2\"}")
        .statusCode()).isEqualTo(202);
    assertError(call("POST", "/v1/messages", "{\"to\":\"al\",\"body\":\"hi\",\"clientMsgId\":\"c3\"}"), 429,
        "too many sends");
  }

  private void assertError(HttpResponse<String> r, int status, String reason) throws Exception {
    assertThat(r.statusCode()).isEqualTo(status);
    assertThat(Json.MAPPER.readTree(r.body()).get("error").asText()).contains(reason);
  }

  private HttpResponse<String> call(String method, String path, String body) throws Exception {
    return call("bob", method, path, body);
  }

  private HttpResponse<String> call(String token, String method, String path, String body) throws Exception {
    return client.send(request(token, method, path, body), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String method, String path, String body) {
    return request("bob", method, path, body);
  }

  private HttpRequest request(String token, String method, String path, String body) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + path))
        .header("Authorization", "Bearer " + token)
        .method(method,
            body.isEmpty() ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
        .build();
  }
}
