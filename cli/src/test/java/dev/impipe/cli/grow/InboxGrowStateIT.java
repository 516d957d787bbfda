package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.edge.http.Json;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.inbox.PrevPosition;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import dev.impipe.testkit.ItEnvironment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a client sees across {@code bin/im inbox grow}, on the real broker with the real fan-out and inbox store:
 * alice's conversation list (a direct chat pinned and muted with unread, a small group she left, a large group read
 * from its timeline) is the same at generation 1 as it was at generation 0, although retention deleted the direct
 * chat's and the small group's entries from the inbox before the grow (the inbox store's state carried over, not
 * rebuilt from the retained inbox, which is replayed over it without counting anything twice), and a sync cursor of
 * generation 0 is answered 409 with that cursor translated in generation 1 (its large-group position too, although
 * she committed an older one), after which her sync returns nothing she had already seen.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class InboxGrowStateIT {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir
  Path tmp;

  @Test
  void theConversationListAndTheCommittedCursorSurviveTheGrow() throws Exception {
    ItEnvironment.Endpoints it = ItEnvironment.get();
    String prefix = ItEnvironment.unique("growstate") + ".";
    Map<String, String> env = new HashMap<>(TestTokens.env());
    env.putAll(Map.of(ImConfig.IM_TOPIC_PREFIX, prefix, ImConfig.IM_USER_PARTITIONS, "4",
        ImConfig.IM_CONVERSATION_PARTITIONS, "2", "IM_INBOX_QUERY_TIMEOUT", "5s", "IM_LARGE_GROUP_THRESHOLD", "2"));
    ImConfig config = ImConfig.fromEnv(env).withEndpoints(it.bootstrapServers(), it.schemaRegistryUrl());
    TopicNames g0 = TopicNames.withPrefix(prefix);
    RestSchemaRegistryClient registry = new RestSchemaRegistryClient(it.schemaRegistryUrl());
    ImTopics topics = new ImTopics(g0, registry);
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(g0, config));
    }
    String alice = ItEnvironment.unique("alice");
    String bob = ItEnvironment.unique("bob");
    String carol = ItEnvironment.unique("carol");
    String small = ItEnvironment.unique("small");
    String large = ItEnvironment.unique("large");

    // Given generation 0 with the fan-out and the inbox store
    JsonNode before;
    String oldCursor;
    long syncedPosition;
    try (PipelineRuntime runtime = new PipelineRuntime(config.withHttpPort(0, tmp.resolve("g0")), env, topics);
        KafkaProducer<String, ChatMessage> messages = messages(it, topics);
        KafkaProducer<String, MembershipChange> members = members(it, topics)) {
      runtime.start(List.of(new FanoutComponent(), new InboxStoreComponent()));
      await().atMost(Duration.ofSeconds(90)).until(runtime::healthy);
      // a direct chat with two unread messages from bob, pinned and muted by alice
      send(messages, topics, direct(bob, alice, "d1", "hello"));
      send(messages, topics, direct(bob, alice, "d2", "are you there?"));
      // a small group (2 members, threshold 2) alice left, and a large one (3 members) with two messages
      for (String m : List.of(alice, bob)) {
        join(members, topics, small, m, MembershipOp.JOIN);
      }
      send(messages, topics, group(bob, small, "s1", "small talk"));
      join(members, topics, small, alice, MembershipOp.LEAVE);
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        JsonNode list = get(runtime, alice, "/v1/users/" + alice + "/conversations");
        assertThat(list.get("conversations")).hasSize(2);
        assertThat(find(list, small).get("member").asBoolean()).isFalse();
      });
      for (String m : List.of(alice, bob, carol)) {
        join(members, topics, large, m, MembershipOp.JOIN);
      }
      send(messages, topics, group(bob, large, "l1", "to the group"));
      send(messages, topics, group(carol, large, "l2", "again"));
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        JsonNode list = get(runtime, alice, "/v1/users/" + alice + "/conversations");
        assertThat(list.get("conversations")).hasSize(3);
        assertThat(find(list, large).get("unread").asLong()).isEqualTo(2);
        assertThat(find(list, small).get("member").asBoolean()).isFalse();
      });
      HttpResponse<String> settings = request("PUT", runtime, alice, "/v1/users/" + alice + "/conversations/"
          + Ids.direct(alice, bob) + "/settings", "{\"pinned\":true,\"muted\":true}");
      assertThat(settings.statusCode()).as(settings.body()).isEqualTo(202);
      long settingsSeq = Json.MAPPER.readTree(settings.body()).get("seq").asLong();
      before = get(runtime, alice, "/v1/users/" + alice + "/conversations?minSeq=" + settingsSeq);
      // and alice's phone synced everything, but committed its position in the large group's timeline only up to
      // the record before the newest one it synced (a client ahead of its commit)
      JsonNode sync = get(runtime, alice, "/v1/users/" + alice + "/devices/phone/sync?minSeq=" + settingsSeq);
      oldCursor = sync.get("cursor").asText();
      SyncCursor synced = SyncCursor.decode(oldCursor);
      syncedPosition = synced.groups().get(large);
      assertThat(syncedPosition).as("the phone's position in " + large).isPositive();
      String behind = SyncCursor.of(synced.inbox(), Map.of(large, syncedPosition - 1)).encode();
      assertThat(request("PUT", runtime, alice, "/v1/users/" + alice + "/devices/phone/cursor",
          "{\"cursor\":\"" + behind + "\"}").statusCode()).isEqualTo(202);
    }
    assertThat(before.get("conversations").get(0).get("pinned").asBoolean()).isTrue();
    assertThat(before.get("conversations").get(0).get("muted").asBoolean()).isTrue();
    assertThat(SyncCursor.decode(oldCursor).generation()).isZero();
    // and the retention has since deleted alice's direct chat and small group from the inbox (up to her LEFT)
    expireUpToLeave(config, topics, alice, small);

    // When the inbox is grown to 8 partitions (the apps stopped: the offline procedure)
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    new InboxGrow(config, topics, 0, new PrintStream(log, true, StandardCharsets.UTF_8))
        .run(new InboxGrow.Options(8, 500, 0));
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("inbox store state: ", "carried over to generation 1");
    // and run again, it carries nothing twice
    ByteArrayOutputStream again = new ByteArrayOutputStream();
    new InboxGrow(config, topics, 0, new PrintStream(again, true, StandardCharsets.UTF_8))
        .run(new InboxGrow.Options(8, 500, 0));
    assertThat(again.toString(StandardCharsets.UTF_8)).contains("inbox store state: already carried over");
    ByteArrayOutputStream status = new ByteArrayOutputStream();
    GrowStatus.print(config, g0, 0, new PrintStream(status, true, StandardCharsets.UTF_8));
    assertThat(status.toString(StandardCharsets.UTF_8)).contains("inbox store state ", "(100%)", "done: restart");

    // And the inbox store starts at generation 1
    Map<String, String> env1 = new HashMap<>(env);
    env1.put(ImConfig.IM_INBOX_GENERATION, "1");
    ImTopics topics1 = new ImTopics(g0.inGeneration(1), registry);
    try (PipelineRuntime runtime = new PipelineRuntime(ImConfig.fromEnv(env1)
        .withEndpoints(it.bootstrapServers(), it.schemaRegistryUrl()).withHttpPort(0, tmp.resolve("g1")), env1,
        topics1)) {
      runtime.start(List.of(new InboxStoreComponent()));
      await().atMost(Duration.ofSeconds(90)).until(runtime::healthy);

      // Then alice's list is the one she had: member flags, muted, pinned, unread, last messages, order
      await().atMost(Duration.ofSeconds(30)).untilAsserted(
          () -> assertThat(get(runtime, alice, "/v1/users/" + alice + "/conversations")).isEqualTo(before));

      // (the 409 answers with her cursor translated through the copy index, 503 until the store has applied the
      // copy up to it)
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        HttpResponse<String> r = request("GET", runtime, alice, "/v1/users/" + alice + "/devices/phone/sync?after="
            + oldCursor, null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
      });

      // And a sync after her generation-0 cursor is told to resync from that cursor, translated
      HttpResponse<String> stale = request("GET", runtime, alice, "/v1/users/" + alice + "/devices/phone/sync?after="
          + oldCursor, null);
      assertThat(stale.statusCode()).as(stale.body()).isEqualTo(409);
      JsonNode body = Json.MAPPER.readTree(stale.body());
      SyncCursor resync = SyncCursor.decode(body.get("cursor").asText());
      assertThat(resync.generation()).isEqualTo(1);
      assertThat(body.get("error").asText()).isEqualTo("inbox generation 0 is gone; resync from "
          + body.get("cursor").asText());
      // whose large-group position is the copy of the one she sent, not of the older one she committed
      assertThat(resync.groups()).containsEntry(large, copyOf(config, topics1, Ids.groupTimeline(large),
          syncedPosition));
      // and committing the old cursor is refused the same way, with the same cursor to resync from
      HttpResponse<String> put = request("PUT", runtime, alice, "/v1/users/" + alice + "/devices/phone/cursor",
          "{\"cursor\":\"" + oldCursor + "\"}");
      assertThat(put.statusCode()).isEqualTo(409);
      assertThat(Json.MAPPER.readTree(put.body()).get("cursor").asText()).isEqualTo(body.get("cursor").asText());

      // And from there her sync returns nothing she had seen, with a generation-1 cursor
      JsonNode after = get(runtime, alice, "/v1/users/" + alice + "/devices/phone/sync?after="
          + body.get("cursor").asText());
      assertThat(after.get("entries")).isEmpty();
      assertThat(SyncCursor.decode(after.get("cursor").asText()).generation()).isEqualTo(1);
      // and once she commits it, so does her sync from the committed cursor
      assertThat(request("PUT", runtime, alice, "/v1/users/" + alice + "/devices/phone/cursor",
          "{\"cursor\":\"" + body.get("cursor").asText() + "\"}").statusCode()).isEqualTo(202);
      assertThat(get(runtime, alice, "/v1/users/" + alice + "/devices/phone/sync").get("entries")).isEmpty();
    }
  }

  /** Deletes the records of alice's inbox partition up to her CONVERSATION_LEFT of {@code group}, as retention would. */
  private static void expireUpToLeave(ImConfig config, ImTopics topics, String alice, String group)
      throws Exception {
    int partition = Placement.partitionFor(alice.getBytes(StandardCharsets.UTF_8), 4, 0);
    TopicPartition tp = new TopicPartition(topics.inbox().name(), partition);
    long left = -1;
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    try (KafkaConsumer<String, InboxEntry> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
        topics.inbox().valueSerde().deserializer())) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      while (consumer.position(tp) < end) {
        for (ConsumerRecord<String, InboxEntry> r : consumer.poll(Duration.ofMillis(200))) {
          if (alice.equals(r.key()) && r.value().getType() == InboxEntryType.CONVERSATION_LEFT
              && group.equals(r.value().getConversationId())) {
            left = r.offset();
          }
        }
      }
    }
    assertThat(left).as("alice's LEFT of " + group).isNotNegative();
    try (Admin admin = Admin.create(config.clientProperties())) {
      admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(left + 1))).all().get(30, TimeUnit.SECONDS);
    }
  }

  /** The offset in {@code topics}' inbox of the copy of {@code key}'s record at {@code prevSeq} of the previous one. */
  private static long copyOf(ImConfig config, ImTopics topics, String key, long prevSeq) throws Exception {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    try (KafkaConsumer<String, InboxEntry> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
        topics.inbox().valueSerde().deserializer())) {
      List<TopicPartition> partitions = consumer.partitionsFor(topics.inbox().name()).stream()
          .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      long found = -1;
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
        for (ConsumerRecord<String, InboxEntry> r : consumer.poll(Duration.ofMillis(200))) {
          if (key.equals(r.key()) && PrevPosition.readFrom(r.headers())
              .filter(p -> p.generation() == 0 && p.seq() == prevSeq).isPresent()) {
            found = r.offset();
          }
        }
      }
      assertThat(found).as("the copy of " + key + "@" + prevSeq).isNotNegative();
      return found;
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

  private static KafkaProducer<String, ChatMessage> messages(ItEnvironment.Endpoints it, ImTopics topics) {
    return new KafkaProducer<>(producerProps(it), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer());
  }

  private static KafkaProducer<String, MembershipChange> members(ItEnvironment.Endpoints it, ImTopics topics) {
    return new KafkaProducer<>(producerProps(it), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer());
  }

  private static Map<String, Object> producerProps(ItEnvironment.Endpoints it) {
    return Map.of("bootstrap.servers", it.bootstrapServers(), "enable.idempotence", true, "acks", "all");
  }

  private static void join(KafkaProducer<String, MembershipChange> members, ImTopics topics, String group,
      String member, MembershipOp op) throws Exception {
    members.send(new ProducerRecord<>(topics.groupMembers().name(), group, new MembershipChange(group, member, op,
        Instant.now(), null, null))).get(30, TimeUnit.SECONDS);
  }

  private static void send(KafkaProducer<String, ChatMessage> messages, ImTopics topics, ChatMessage m)
      throws Exception {
    messages.send(new ProducerRecord<>(topics.messages().name(), m.getConversationId(), m)).get(30, TimeUnit.SECONDS);
  }

  private static ChatMessage direct(String from, String to, String clientMsgId, String body) {
    return ChatMessage.newBuilder().setMessageId("m-" + from + clientMsgId).setClientMsgId(clientMsgId)
        .setConversationId(Ids.direct(from, to)).setConversationType(ConversationType.DIRECT)
        .setType(MessageType.MESSAGE).setSenderId(from).setRecipientId(to).setBody(body).setSentAt(Instant.now())
        .setAttributes(Map.of()).build();
  }

  private static ChatMessage group(String from, String group, String clientMsgId, String body) {
    return ChatMessage.newBuilder().setMessageId("m-" + from + clientMsgId).setClientMsgId(clientMsgId)
        .setConversationId(group).setConversationType(ConversationType.GROUP).setGroupId(group)
        .setType(MessageType.MESSAGE).setSenderId(from).setBody(body).setSentAt(Instant.now())
        .setAttributes(Map.of()).build();
  }

  private static JsonNode get(PipelineRuntime runtime, String user, String path) throws Exception {
    HttpResponse<String> response = request("GET", runtime, user, path, null);
    assertThat(response.statusCode()).as("%s -> %s", path, response.body()).isEqualTo(200);
    return Json.MAPPER.readTree(response.body());
  }

  private static HttpResponse<String> request(String method, PipelineRuntime runtime, String user, String path,
      String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + runtime.http().port() + path))
        .header("Authorization", "Bearer " + TestTokens.token(user, "phone")).timeout(Duration.ofSeconds(30));
    if (body != null) {
      b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
