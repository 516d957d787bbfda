package dev.impipe.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicMismatchException;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import dev.impipe.schemas.registry.SchemaRegistryException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The real broker and the real registry: schema registration, Avro round trip, topic provisioning. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BrokerAndRegistryIT {

  private static ItEnvironment.Endpoints env;

  @BeforeAll
  static void start() {
    env = ItEnvironment.get();
  }

  @Test
  void restClientRegistersAndLooksUpSchemasOnTheRealRegistry() {
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(env.schemaRegistryUrl());
    String subject = ItEnvironment.unique("subject") + "-value";
    int id = client.register(subject, ChatMessage.getClassSchema());

    // A fresh client (empty cache) finds the same schema by id, and the same id for the same schema.
    RestSchemaRegistryClient fresh = new RestSchemaRegistryClient(env.schemaRegistryUrl());
    assertThat(fresh.getById(id)).isEqualTo(ChatMessage.getClassSchema());
    assertThat(fresh.register(subject, ChatMessage.getClassSchema())).isEqualTo(id);

    // An evolved schema (an added optional field) gets registered too, under another id.
    Schema evolved = new Schema.Parser().parse(ChatMessage.getClassSchema().toString()
        .replace("{\"name\":\"attributes\"", "{\"name\":\"extra\",\"type\":[\"null\",\"string\"],\"default\":null},"
            + "{\"name\":\"attributes\""));
    assertThat(fresh.register(subject, evolved)).isNotEqualTo(id);
  }

  @Test
  void unknownSchemaIdIsAClearError() {
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(env.schemaRegistryUrl());
    assertThatThrownBy(() -> client.getById(987_654))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("987654")
        .hasMessageContaining(env.schemaRegistryUrl());
  }

  @Test
  void chatMessageRoundTripsThroughTheRealBrokerAndRegistry() throws Exception {
    String prefix = ItEnvironment.unique("rt") + ".";
    ImConfig config = ImConfig.fromEnv(Map.of("IM_CONVERSATION_PARTITIONS", "3", "IM_USER_PARTITIONS", "3"))
        .withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      List<String> created = new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
      assertThat(created).hasSize(12).contains(prefix + "messages", prefix + "history", prefix + "rejected");
      // A second start verifies and creates nothing.
      assertThat(new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config))).isEmpty();
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    ChatMessage message = ChatMessage.newBuilder()
        .setMessageId("m-1").setClientMsgId("c-1").setConversationId("d:alice:bob")
        .setConversationType(ConversationType.DIRECT).setType(MessageType.MESSAGE)
        .setSenderId("alice").setRecipientId("bob").setBody("hello")
        .setSentAt(Instant.ofEpochMilli(1_700_000_000_000L)).build();

    Map<String, Object> common = Map.of("bootstrap.servers", env.bootstrapServers());
    try (KafkaProducer<String, ChatMessage> producer = new KafkaProducer<>(common,
        topics.messages().keySerde().serializer(), topics.messages().valueSerde().serializer())) {
      producer.send(new ProducerRecord<>(topics.messages().name(), "d:alice:bob", message)).get(30, TimeUnit.SECONDS);
    }
    Map<String, Object> consumerProps = new java.util.HashMap<>(common);
    consumerProps.put("group.id", ItEnvironment.unique("g"));
    consumerProps.put("auto.offset.reset", "earliest");
    consumerProps.put("isolation.level", "read_committed");
    List<ConsumerRecord<String, ChatMessage>> seen = new ArrayList<>();
    try (KafkaConsumer<String, ChatMessage> consumer = new KafkaConsumer<>(consumerProps,
        topics.messages().keySerde().deserializer(), topics.messages().valueSerde().deserializer())) {
      consumer.subscribe(Set.of(topics.messages().name()));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (seen.isEmpty() && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(seen::add);
      }
    }
    assertThat(seen).hasSize(1);
    assertThat(seen.get(0).key()).isEqualTo("d:alice:bob");
    assertThat(seen.get(0).value()).isEqualTo(message);
  }

  @Test
  void existingTopicsThatAreNotCoPartitionedAreRejected() throws Exception {
    String prefix = ItEnvironment.unique("mismatch") + ".";
    TopicNames names = TopicNames.withPrefix(prefix);
    ImConfig config = ImConfig.fromEnv(Map.of("IM_CONVERSATION_PARTITIONS", "3", "IM_USER_PARTITIONS", "3"))
        .withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      // Someone created im.group-members by hand with another partition count.
      admin.createTopics(List.of(new NewTopic(names.groupMembers(), 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
      assertThatThrownBy(() -> new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config)))
          .isInstanceOf(TopicMismatchException.class)
          .hasMessageContaining("co-partitioned")
          .hasMessageContaining(names.groupMembers() + " has 2")
          .hasMessageContaining(names.messages() + " has 3");
    }
  }
}
