package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Group rules end to end on the real broker and registry: a non-admin's add is refused, the refused actor reads a
 * REJECTED entry from their inbox (read_committed) and im.rejected holds the request with the reason.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class GroupAdminIT {

  @Test
  void aNonAdminsAddIsRefusedAndTheActorReadsWhy() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("group-admin") + ".";
    ImConfig config = ImConfig.fromEnv(Map.of("IM_TOPIC_PREFIX", prefix, "IM_CONVERSATION_PARTITIONS", "3",
        "IM_USER_PARTITIONS", "4", "IM_HTTP_PORT", "0",
        "IM_STATE_DIR", TestTmpDir.newDir("group-admin-it").toString()))
        .withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    ImTopics topics;
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    topics = new ImTopics(names, SchemaRegistryClients.forUrl(env.schemaRegistryUrl()));
    Map<String, Object> producerProps = new HashMap<>(config.clientProperties());
    producerProps.put("enable.idempotence", true);
    producerProps.put("acks", "all");

    PipelineRuntime runtime =
        new PipelineRuntime(config, dev.impipe.edge.auth.TestTokens.env(Map.of("IM_HTTP_PORT", "0")), topics);
    try (runtime; KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(producerProps, new StringSerializer(), new ByteArraySerializer())) {
      runtime.start(List.of(new FanoutComponent()));
      await().atMost(Duration.ofSeconds(60)).until(runtime::healthy);

      // Given alice creates "club" and adds bob (each change acknowledged before the next)
      membership(producer, topics, "alice", "alice", MembershipOp.JOIN, "c-create");
      membership(producer, topics, "alice", "bob", MembershipOp.JOIN, "c-add-bob");
      // When bob tries to add mallory, then alice posts
      membership(producer, topics, "bob", "mallory", MembershipOp.JOIN, "c-add-mallory");
      ChatMessage post = ChatMessage.newBuilder().setMessageId("m-1").setClientMsgId("c-1")
          .setType(MessageType.MESSAGE).setConversationId("club").setConversationType(ConversationType.GROUP)
          .setGroupId("club").setSenderId("alice").setBody("welcome").setSentAt(Instant.now())
          .setAttributes(Map.of()).build();
      producer.send(new ProducerRecord<>(names.messages(), "club",
          topics.messages().valueSerde().serializer().serialize(names.messages(), post))).get(30, TimeUnit.SECONDS);

      // Then (read_committed) alice and bob joined, bob was told why his add was refused, the post reached both
      // members and mallory's inbox is empty
      List<ConsumerRecord<String, InboxEntry>> inbox = readCommitted(config, names.inbox(),
          topics.inbox().keySerde().deserializer(), topics.inbox().valueSerde().deserializer(), 5);
      assertThat(inbox).extracting(r -> r.key() + ":" + r.value().getType()).containsExactlyInAnyOrder(
          "alice:CONVERSATION_JOINED", "bob:CONVERSATION_JOINED", "bob:REJECTED", "alice:MESSAGE", "bob:MESSAGE");
      InboxEntry rejected = inbox.stream().filter(r -> r.value().getType() == InboxEntryType.REJECTED)
          .findFirst().orElseThrow().value();
      assertThat(rejected.getUserId()).isEqualTo("bob");
      assertThat(rejected.getClientMsgId()).isEqualTo("c-add-mallory");
      assertThat(rejected.getReasonCode()).isEqualTo("NOT_ADMIN");
      assertThat(rejected.getTargetUserId()).isEqualTo("mallory");
      assertThat(rejected.getReason()).isEqualTo("bob is not the admin of group club: only the admin adds members"
          + " (mallory)");
      // And im.rejected holds bob's request with the same reason
      ConsumerRecord<byte[], byte[]> dead = readCommitted(config, names.rejected(), new ByteArrayDeserializer(),
          new ByteArrayDeserializer(), 1).get(0);
      MembershipChange refused = topics.groupMembers().valueSerde().deserializer()
          .deserialize(names.groupMembers(), dead.value());
      assertThat(refused.getActorId()).isEqualTo("bob");
      assertThat(refused.getUserId()).isEqualTo("mallory");
      assertThat(header(dead, "__streams.errors.message")).isEqualTo(rejected.getReason());
      assertThat(header(dead, "__streams.errors.topic")).isEqualTo(names.groupMembers());
    }
  }

  private static void membership(KafkaProducer<String, byte[]> producer, ImTopics topics, String actor, String user,
      MembershipOp op, String clientMsgId) throws Exception {
    MembershipChange change = MembershipChange.newBuilder().setGroupId("club").setUserId(user).setOp(op)
        .setAt(Instant.now()).setActorId(actor).setClientMsgId(clientMsgId).build();
    String topic = topics.groupMembers().name();
    producer.send(new ProducerRecord<>(topic, "club", topics.groupMembers().valueSerde().serializer()
        .serialize(topic, change))).get(30, TimeUnit.SECONDS);
  }

  private static <K, V> List<ConsumerRecord<K, V>> readCommitted(ImConfig config, String topic,
      Deserializer<K> keys, Deserializer<V> values, int count) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("isolation.level", "read_committed");
    props.put("auto.offset.reset", "earliest");
    props.put("group.id", ItEnvironment.unique("reader"));
    List<ConsumerRecord<K, V>> out = new ArrayList<>();
    try (KafkaConsumer<K, V> consumer = new KafkaConsumer<>(props, keys, values)) {
      consumer.subscribe(Set.of(topic));
      await().atMost(Duration.ofSeconds(90)).until(() -> {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        return out.size() >= count;
      });
      // Anything beyond the expected count would be wrong: give it a moment to show up.
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (System.nanoTime() < until) {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
      }
    }
    assertThat(out).hasSize(count);
    return out;
  }

  private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

}
