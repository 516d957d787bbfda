package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.domain.Ids;
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
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The conversation list on the real broker: the fan-out and two inbox-store instances. A read on one device of a
 * user clears the unread count the other device's list shows, through either instance (the list is routed to the
 * owner of the user's partition); settings reach the list; only the user reads it; a new instance that restores
 * the stores from their changelogs lists the same; a large group is counted from its timeline.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ConversationListIT {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static ItEnvironment.Endpoints env;
  private static ImConfig config;
  private static Map<String, String> envMap;
  private static ImTopics topics;
  private static PipelineRuntime first;
  private static PipelineRuntime second;
  private static Path stateRoot;
  private static KafkaProducer<String, ChatMessage> messages;
  private static KafkaProducer<String, MembershipChange> membership;

  @BeforeAll
  static void start() throws Exception {
    env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("conversations") + ".";
    envMap = new HashMap<>(TestTokens.env());
    envMap.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "6", "IM_CONVERSATION_PARTITIONS", "2",
        "IM_INBOX_QUERY_TIMEOUT", "5s", "IM_LARGE_GROUP_THRESHOLD", "2"));
    config = ImConfig.fromEnv(envMap).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    stateRoot = TestTmpDir.newDir("conversations-it-");
    first = new PipelineRuntime(config.withHttpPort(0, stateRoot.resolve("first")), envMap, topics);
    first.start(List.of(new FanoutComponent(), new InboxStoreComponent()));
    second = new PipelineRuntime(config.withHttpPort(0, stateRoot.resolve("second")), envMap, topics);
    second.start(List.of(new InboxStoreComponent()));
    await().atMost(Duration.ofSeconds(90)).until(() -> first.healthy() && second.healthy());
    Map<String, Object> props = Map.of("bootstrap.servers", env.bootstrapServers(), "enable.idempotence", true,
        "acks", "all");
    messages = new KafkaProducer<>(props, topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer());
    membership = new KafkaProducer<>(props, topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer());
  }

  @AfterAll
  static void stop() {
    if (messages != null) {
      messages.close();
      membership.close();
    }
    if (second != null) {
      second.close();
    }
    if (first != null) {
      first.close();
    }
    dev.impipe.embedded.Dirs.deleteRecursively(stateRoot);
  }

  @Test
  void aReadOnOneDeviceClearsTheOtherDevicesUnreadThroughEitherInstance() throws Exception {
    String alice = ItEnvironment.unique("alice");
    String bob = ItEnvironment.unique("bob");
    String carol = ItEnvironment.unique("carol");
    String chat = Ids.direct(alice, bob);
    // Given bob writes alice twice
    send(bob, alice, "c1", "hello");
    long second2 = send(bob, alice, "c2", "are you there?");

    // Then alice's phone sees both unread, through either instance (one of them forwards to the owner)
    for (PipelineRuntime instance : List.of(first, second)) {
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        JsonNode list = get(instance, alice, "phone", "/v1/users/" + alice + "/conversations?limit=20");
        assertThat(list.get("unreadTotal").asLong()).isEqualTo(2);
        JsonNode c = list.get("conversations").get(0);
        assertThat(c.get("conversationId").asText()).isEqualTo(chat);
        assertThat(c.get("type").asText()).isEqualTo("DIRECT");
        assertThat(c.get("peerId").asText()).isEqualTo(bob);
        assertThat(c.get("unread").asLong()).isEqualTo(2);
        assertThat(c.get("last").get("body").asText()).isEqualTo("are you there?");
        assertThat(c.get("last").get("conversationSeq").asLong()).isEqualTo(second2);
      });
    }

    // When alice's tablet reads up to the second message
    messages.send(new ProducerRecord<>(topics.messages().name(), chat,
        ChatMessage.newBuilder().setMessageId("r-" + alice)
            .setClientMsgId("r1").setConversationId(chat).setConversationType(ConversationType.DIRECT)
            .setType(MessageType.READ).setSenderId(alice).setSenderDeviceId("tab").setRecipientId(bob)
            .setReadUpToSeq(second2).setSentAt(Instant.now()).setAttributes(Map.of()).build()))
        .get(30,
            TimeUnit.SECONDS);

    // Then the phone's list shows nothing unread, through either instance
    for (PipelineRuntime instance : List.of(first, second)) {
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        JsonNode list = get(instance, alice, "phone", "/v1/users/" + alice + "/conversations");
        assertThat(list.get("unreadTotal").asLong()).isZero();
        assertThat(list.get("conversations").get(0).get("unread").asLong()).isZero();
        assertThat(list.get("conversations").get(0).get("readUpToSeq").asLong()).isEqualTo(second2);
      });
    }

    // When she pins and mutes it through one instance, then reads her list through the other with minSeq
    HttpResponse<String> put = request("PUT", second, alice, "tab", "/v1/users/" + alice + "/conversations/" + chat
        + "/settings", "{\"pinned\":true,\"muted\":true}");
    assertThat(put.statusCode()).as(put.body()).isEqualTo(202);
    long seq = Json.MAPPER.readTree(put.body()).get("seq").asLong();
    JsonNode after = get(first, alice, "phone", "/v1/users/" + alice + "/conversations?minSeq=" + seq);
    // Then the list shows it at once (read-your-writes)
    assertThat(after.get("conversations").get(0).get("pinned").asBoolean()).isTrue();
    assertThat(after.get("conversations").get(0).get("muted").asBoolean()).isTrue();

    // And nobody else reads or changes alice's list
    assertThat(request("GET", first, bob, "p", "/v1/users/" + alice + "/conversations", null).statusCode())
        .isEqualTo(403);
    assertThat(request("PUT", second, bob, "p", "/v1/users/" + alice + "/conversations/" + chat + "/settings",
        "{\"muted\":false}").statusCode()).isEqualTo(403);
    // and a bad body is a 400
    assertThat(request("PUT", first, alice, "p", "/v1/users/" + alice + "/conversations/" + chat + "/settings",
        "{\"muted\":\"yes\"}").statusCode()).isEqualTo(400);

    // When a large group (threshold 2) of alice, bob and carol gets two messages from bob
    String group = ItEnvironment.unique("g");
    for (String member : List.of(alice, bob, carol)) {
      membership.send(new ProducerRecord<>(topics.groupMembers().name(), group, new MembershipChange(group, member,
          MembershipOp.JOIN, Instant.now(), null, null))).get(30, TimeUnit.SECONDS);
    }
    sendToGroup(bob, group, "g1", "to the group");
    sendToGroup(bob, group, "g2", "again");
    // Then alice's list counts them from the group's timeline, through either instance (its owner may be the
    // other one: a routed sub-read), and bob's own messages are not unread for him
    for (PipelineRuntime instance : List.of(first, second)) {
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        JsonNode g = find(get(instance, alice, "phone", "/v1/users/" + alice + "/conversations"), group);
        assertThat(g.get("unread").asLong()).isEqualTo(2);
        assertThat(g.get("last").get("body").asText()).isEqualTo("again");
        assertThat(find(get(instance, bob, "p", "/v1/users/" + bob + "/conversations"), group).get("unread")
            .asLong()).isZero();
      });
    }
    assertThat(find(get(first, alice, "phone", "/v1/users/" + alice + "/conversations"), group)
        .get("largeGroup").asBoolean()).isTrue();

    // When a new instance takes over from both (its stores restored from the changelogs)
    second.close();
    second = null;
    PipelineRuntime third = new PipelineRuntime(config.withHttpPort(0, stateRoot.resolve("third")), envMap, topics);
    try {
      third.start(List.of(new InboxStoreComponent()));
      first.close();
      first = null;
      await().atMost(Duration.ofSeconds(120)).until(third::healthy);
      // Then it lists the same
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        JsonNode list = get(third, alice, "phone", "/v1/users/" + alice + "/conversations");
        JsonNode c = list.get("conversations").get(0);
        assertThat(c.get("conversationId").asText()).isEqualTo(chat);
        assertThat(c.get("pinned").asBoolean()).isTrue();
        assertThat(c.get("unread").asLong()).isZero();
        assertThat(c.get("last").get("body").asText()).isEqualTo("are you there?");
      });
    } finally {
      third.close();
    }
  }

  private static JsonNode find(JsonNode list, String conversation) {
    for (JsonNode c : list.get("conversations")) {
      if (c.get("conversationId").asText().equals(conversation)) {
        return c;
      }
    }
    throw new AssertionError(conversation + " not in " + list);
  }

  private static void sendToGroup(String from, String group, String clientMsgId, String body) throws Exception {
    messages.send(new ProducerRecord<>(topics.messages().name(), group, ChatMessage.newBuilder()
        .setMessageId("m-" + from + clientMsgId).setClientMsgId(clientMsgId).setConversationId(group)
        .setConversationType(ConversationType.GROUP).setGroupId(group).setType(MessageType.MESSAGE)
        .setSenderId(from).setBody(body).setSentAt(Instant.now()).setAttributes(Map.of()).build()))
        .get(30, TimeUnit.SECONDS);
  }

  private static long send(String from, String to, String clientMsgId, String body) throws Exception {
    String chat = Ids.direct(from, to);
    return messages.send(new ProducerRecord<>(topics.messages().name(), chat,
        ChatMessage.newBuilder().setMessageId("m-" + from + clientMsgId)
            .setClientMsgId(clientMsgId).setConversationId(chat).setConversationType(ConversationType.DIRECT)
            .setType(MessageType.MESSAGE).setSenderId(from).setRecipientId(to).setBody(body).setSentAt(Instant.now())
            .setAttributes(Map.of()).build()))
        .get(30, TimeUnit.SECONDS).offset();
  }

  private static JsonNode get(PipelineRuntime instance, String user, String device, String path) throws Exception {
    HttpResponse<String> response = request("GET", instance, user, device, path, null);
    assertThat(response.statusCode()).as("%s -> %s", path, response.body()).isEqualTo(200);
    return Json.MAPPER.readTree(response.body());
  }

  private static HttpResponse<String> request(String method, PipelineRuntime instance, String user, String device,
      String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + instance.http().port() + path))
        .header("Authorization", "Bearer " + TestTokens.token(user, device)).timeout(Duration.ofSeconds(30));
    if (body != null) {
      b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
