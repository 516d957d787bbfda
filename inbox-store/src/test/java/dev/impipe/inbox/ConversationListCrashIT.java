package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.edge.http.Json;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import dev.impipe.testkit.ChildPipeline;
import dev.impipe.testkit.Drain;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.testkit.TestTmpDir;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The conversation list after a crash between two checkpoints, on the real broker: the inbox store runs in a JVM of
 * its own with a checkpoint interval of ten minutes, so after the first write-back its stores and changelog lag the
 * input it commits. It is killed (SIGKILL), and a new instance restores the stores from their changelogs (the states
 * as of the checkpoint) and replays the inbox entries after the checkpoint up to the committed offset: every message
 * is counted once, none lost, none twice, and what comes after is counted on top.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ConversationListCrashIT {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final int SENDERS = 20;
  private static final int PER_SENDER = 5;

  @Test
  void aKilledInboxStoreListsEveryMessageOnceAfterItsStoresAreRestored() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("conversations-crash") + ".";
    Path work = TestTmpDir.newDir("conversations-crash");
    Map<String, String> vars = new HashMap<>(TestTokens.env());
    vars.putAll(Map.of("KAFKA_BOOTSTRAP_SERVERS", env.bootstrapServers(), "SCHEMA_REGISTRY_URL",
        env.schemaRegistryUrl(), "IM_TOPIC_PREFIX", prefix, "IM_HTTP_PORT", "0", "IM_USER_PARTITIONS", "2",
        "IM_CONVERSATION_PARTITIONS", "2", "IM_CONVERSATION_CHECKPOINT_INTERVAL", "10m",
        // A killed member leaves no goodbye: let the new one take over after 6 s, not 45 s.
        "KAFKA_SESSION_TIMEOUT_MS", "6000", "KAFKA_HEARTBEAT_INTERVAL_MS", "1000"));
    ImConfig config = ImConfig.fromEnv(vars);
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    String alice = ItEnvironment.unique("alice");
    Map<String, Object> props = Map.of("bootstrap.servers", env.bootstrapServers(), "enable.idempotence", true,
        "acks", "all");

    try (PipelineRuntime fanout = new PipelineRuntime(config.withHttpPort(0, work.resolve("fanout")), vars, topics);
        KafkaProducer<String, ChatMessage> messages = new KafkaProducer<>(props,
            topics.messages().keySerde().serializer(), topics.messages().valueSerde().serializer())) {
      fanout.start(List.of(new FanoutComponent()));
      Map<String, String> childVars = new HashMap<>(vars);
      childVars.put("IM_STATE_DIR", work.resolve("child").toString());
      ChildPipeline child = ChildPipeline.start(InboxStoreComponent.class, childVars, work.resolve("child.log"));
      try {
        // The first message is written back at once (the first commit after the start) ...
        send(messages, topics, "s0", alice, 0);
        caughtUp(env, prefix, names);
        // ... the rest only in memory, though the inbox store commits their input offsets
        for (int i = 0; i < SENDERS; i++) {
          for (int n = i == 0 ? 1 : 0; n < PER_SENDER; n++) {
            send(messages, topics, "s" + i, alice, n);
          }
        }
        caughtUp(env, prefix, names);
      } finally {
        child.kill();
      }

      try (PipelineRuntime store = new PipelineRuntime(config.withHttpPort(0, work.resolve("store")), vars,
          topics)) {
        store.start(List.of(new InboxStoreComponent()));
        await().atMost(Duration.ofSeconds(90)).until(store::healthy);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
          JsonNode list = list(store, alice);
          assertThat(list.get("conversations")).hasSize(SENDERS);
          assertThat(list.get("unreadTotal").asLong()).isEqualTo((long) SENDERS * PER_SENDER);
          for (JsonNode c : list.get("conversations")) {
            assertThat(c.get("unread").asLong()).as(c.toString()).isEqualTo(PER_SENDER);
          }
        });

        // And what comes after is counted on top, once
        send(messages, topics, "s0", alice, PER_SENDER);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
          JsonNode list = list(store, alice);
          assertThat(list.get("unreadTotal").asLong()).isEqualTo((long) SENDERS * PER_SENDER + 1);
          assertThat(list.get("conversations").get(0).get("conversationId").asText())
              .isEqualTo(Ids.direct("s0", alice));
          assertThat(list.get("conversations").get(0).get("unread").asLong()).isEqualTo(PER_SENDER + 1);
        });
      }
    }
    dev.impipe.embedded.Dirs.deleteRecursively(work);
  }

  private static void caughtUp(ItEnvironment.Endpoints env, String prefix, TopicNames names) {
    Drain.awaitCaughtUp(env.bootstrapServers(), prefix + FanoutTopology.APP_NAME, List.of(names.messages()),
        Duration.ofSeconds(60));
    Drain.awaitCaughtUp(env.bootstrapServers(), prefix + InboxStoreTopology.APP_NAME, List.of(names.inbox()),
        Duration.ofSeconds(60));
  }

  private static void send(KafkaProducer<String, ChatMessage> messages, ImTopics topics, String from, String to,
      int n) throws Exception {
    String chat = Ids.direct(from, to);
    messages.send(new ProducerRecord<>(topics.messages().name(), chat, ChatMessage.newBuilder()
        .setMessageId("m-" + from + "-" + n).setClientMsgId(from + "-" + n).setConversationId(chat)
        .setConversationType(ConversationType.DIRECT).setType(MessageType.MESSAGE).setSenderId(from)
        .setRecipientId(to).setBody("message " + n).setSentAt(Instant.now()).setAttributes(Map.of()).build()))
        .get(30, TimeUnit.SECONDS);
  }

  private static JsonNode list(PipelineRuntime instance, String user) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + instance.http().port()
        + "/v1/users/" + user + "/conversations?limit=50"))
        .header("Authorization", "Bearer " + TestTokens.token(user, "phone")).timeout(Duration.ofSeconds(30)).build();
    HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return Json.MAPPER.readTree(response.body());
  }
}
