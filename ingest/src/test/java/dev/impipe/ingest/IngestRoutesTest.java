package dev.impipe.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.runtime.http.HttpApi;
import dev.impipe.runtime.http.Json;
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
    http = new HttpApi("127.0.0.1", 0);
    new IngestRoutes(publisher, IngestConfig.defaults(), new SimpleMeterRegistry()).register(http);
    http.start();
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
    assertThat(body.get("messageId").asText()).isEqualTo(MessagePublisher.messageId("bob", "c1"));
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
  void membershipAndCancelAnswer202() throws Exception {
    assertThat(call("PUT", "/v1/groups/g1/members/alice", "").statusCode()).isEqualTo(202);
    assertThat(call("DELETE", "/v1/groups/g1/members/alice", "").statusCode()).isEqualTo(202);
    assertThat(call("DELETE", "/v1/scheduled/m42", "").statusCode()).isEqualTo(202);
    assertThat(producer.history()).extracting(r -> r.topic())
        .containsExactly("im.group-members", "im.group-members", "im.delayed");
  }

  @Test
  void kafkaFailureIs503AndSaysNothingWasPublished() throws Exception {
    producer = null;
    MockProducer<String, byte[]> failing = new MockProducer<>(false, null, new StringSerializer(),
        new ByteArraySerializer());
    http.close();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    http = new HttpApi("127.0.0.1", 0);
    new IngestRoutes(new MessagePublisher(topics, IngestConfig.defaults(),
        Clock.fixed(MessagePublisherTest.NOW, ZoneOffset.UTC), failing), IngestConfig.defaults(),
        new SimpleMeterRegistry()).register(http);
    http.start();
    java.util.concurrent.CompletableFuture<HttpResponse<String>> pending = client.sendAsync(
        request("PUT", "/v1/groups/g1/members/alice", ""), HttpResponse.BodyHandlers.ofString());
    org.awaitility.Awaitility.await().until(() -> !failing.history().isEmpty());
    failing.errorNext(new org.apache.kafka.common.errors.TimeoutException("broker down"));
    assertError(pending.get(), 503, "broker down");
  }

  private void assertError(HttpResponse<String> r, int status, String reason) throws Exception {
    assertThat(r.statusCode()).isEqualTo(status);
    assertThat(Json.MAPPER.readTree(r.body()).get("error").asText()).contains(reason);
  }

  private HttpResponse<String> call(String method, String path, String body) throws Exception {
    return client.send(request(method, path, body), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String method, String path, String body) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + path))
        .method(method, body.isEmpty() ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
        .build();
  }
}
