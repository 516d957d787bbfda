package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.embedded.BrokerSecurity;
import dev.impipe.embedded.EmbeddedKafka;
import dev.impipe.runtime.security.ScramPrincipals;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka security on the real broker: SASL/SCRAM-SHA-512 and the StandardAuthorizer, nothing allowed without an ACL,
 * and every principal with exactly the ACLs of its {@code ComponentAcls} row. The delay component runs as
 * {@code im-delay} (its own credentials in {@code IM_DELAY_KAFKA_SASL_JAAS_CONFIG}, no shared login at all): a
 * schedule written as {@code im-ingest} is delivered, one for a topic outside the allow-list goes to the rejected
 * topic with its reason; the sync component's principal may write cursors but not group membership.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SecuredDelayIT {

  private static EmbeddedKafka kafka;
  private static BrokerSecurity security;
  private static final Map<String, String> PASSWORDS = new LinkedHashMap<>();
  private static String prefix;
  private static TopicNames names;
  private static ImTopics topics;

  @TempDir
  static Path stateDir;

  @BeforeAll
  static void startSecuredBroker() throws Exception {
    security = BrokerSecurity.generate();
    kafka = EmbeddedKafka.startSecured(security);
    prefix = ItEnvironment.unique("secure") + ".";
    names = TopicNames.withPrefix(prefix);
    for (String user : List.of("im-delay", "im-ingest", "im-inbox-store")) {
      PASSWORDS.put(user, ScramPrincipals.newPassword());
    }
    ImConfig adminConfig = ImConfig.fromEnv(Map.of("IM_TOPIC_PREFIX", prefix, "IM_CONVERSATION_PARTITIONS", "2",
        "IM_USER_PARTITIONS", "2"));
    try (Admin admin = Admin.create(kafka.adminClientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, adminConfig));
      ScramPrincipals.provision(admin, prefix, PASSWORDS);
    }
    topics = new ImTopics(names, new RestSchemaRegistryClient(ItEnvironment.get().schemaRegistryUrl()));
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @Test
  void theDelayComponentRunsWithOnlyItsAclsAndRefusesTargetsOutsideItsAllowList() throws Exception {
    Map<String, String> vars = new HashMap<>(Map.of("IM_TOPIC_PREFIX", prefix, "IM_CONVERSATION_PARTITIONS", "2",
        "IM_USER_PARTITIONS", "2", "IM_HTTP_PORT", "0",
        "KAFKA_SECURITY_PROTOCOL", BrokerSecurity.SECURITY_PROTOCOL, "KAFKA_SASL_MECHANISM", "SCRAM-SHA-512",
        "IM_DELAY_KAFKA_SASL_JAAS_CONFIG", ScramPrincipals.jaasConfig("im-delay", PASSWORDS.get("im-delay"))));
    ImConfig config = ImConfig.fromEnv(vars).withEndpoints(kafka.bootstrapServers(),
        ItEnvironment.get().schemaRegistryUrl()).withHttpPort(0, stateDir);
    ScheduledMessages scheduler = new ScheduledMessages(topics);

    try (PipelineRuntime runtime = new PipelineRuntime(config, TestTokens.env(vars), topics);
        KafkaProducer<String, ScheduleCommand> ingest = producer("im-ingest", topics.delayed().valueSerde()
            .serializer());
        KafkaConsumer<byte[], byte[]> reader = adminConsumer()) {
      // Given: the delay app runs as im-delay
      runtime.start(List.of(new DelayComponent()));
      await().atMost(Duration.ofSeconds(60)).until(runtime::healthy);
      reader.subscribe(Set.of(names.messages(), names.rejected(), names.inbox()));

      // When: ingest's principal schedules a chat message 1 s ahead, and a record for the inbox (a topic the
      // delay principal may write, but not one of its allowed targets)
      Instant due = Instant.now().plusSeconds(1);
      ingest.send(scheduler.record(scheduler.schedule(message("m1"), due))).get(30, TimeUnit.SECONDS);
      ScheduleCommand toInbox = ScheduleCommand.newBuilder(scheduler.schedule(message("m2"), due))
          .setTargetTopic(names.inbox()).build();
      ingest.send(scheduler.record(toInbox)).get(30, TimeUnit.SECONDS);

      // Then: m1 reaches the messages topic, m2 the rejected topic with its reason, nothing the inbox
      List<ConsumerRecord<byte[], byte[]>> seen = new ArrayList<>();
      await().atMost(Duration.ofSeconds(45)).untilAsserted(() -> {
        reader.poll(Duration.ofMillis(200)).forEach(seen::add);
        assertThat(seen).extracting(ConsumerRecord::topic).contains(names.messages(), names.rejected());
      });
      ConsumerRecord<byte[], byte[]> delivered = seen.stream().filter(r -> r.topic().equals(names.messages()))
          .findFirst().orElseThrow();
      assertThat(topics.messages().valueSerde().deserializer().deserialize(names.messages(), delivered.value())
          .getMessageId()).isEqualTo("m1");
      assertThat(delivered.timestamp()).isGreaterThanOrEqualTo(due.toEpochMilli());
      ConsumerRecord<byte[], byte[]> rejected = seen.stream().filter(r -> r.topic().equals(names.rejected()))
          .findFirst().orElseThrow();
      assertThat(new String(rejected.key(), StandardCharsets.UTF_8)).isEqualTo("m2");
      assertThat(new String(rejected.headers().lastHeader(RejectedHeaders.MESSAGE).value(),
          StandardCharsets.UTF_8)).isEqualTo("target topic '" + names.inbox() + "' is not allowed");
      assertThat(seen).extracting(ConsumerRecord::topic).doesNotContain(names.inbox());
    }
  }

  @Test
  void theSyncComponentsPrincipalMayWriteCursorsButNotGroupMembership() throws Exception {
    try (KafkaProducer<String, DeviceCursor> cursors = producer("im-inbox-store",
        topics.deviceCursors().valueSerde().serializer());
        KafkaProducer<String, MembershipChange> members = producer("im-inbox-store",
            topics.groupMembers().valueSerde().serializer())) {
      cursors.send(new ProducerRecord<>(names.deviceCursors(), "bob|phone", null)).get(30, TimeUnit.SECONDS);

      assertThatThrownBy(() -> members.send(new ProducerRecord<>(names.groupMembers(), "team", null))
          .get(30, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class).cause().isInstanceOf(TopicAuthorizationException.class)
          .hasMessageContaining(names.groupMembers());
    }
  }

  @Test
  void aPrincipalWithoutCredentialsOrWithAWrongPasswordIsNotLetIn() {
    try (KafkaProducer<String, DeviceCursor> wrong = new KafkaProducer<>(clientProps("im-inbox-store", "wrong"),
        topics.deviceCursors().keySerde().serializer(), topics.deviceCursors().valueSerde().serializer())) {
      assertThatThrownBy(() -> wrong.send(new ProducerRecord<>(names.deviceCursors(), "k", null))
          .get(30, TimeUnit.SECONDS))
          .hasCauseInstanceOf(org.apache.kafka.common.errors.SaslAuthenticationException.class);
    }
  }

  private static <V> KafkaProducer<String, V> producer(String user, Serializer<V> values) {
    Map<String, Object> props = clientProps(user, PASSWORDS.get(user));
    props.put("acks", "all");
    props.put("max.block.ms", 20_000);
    return new KafkaProducer<>(props, topics.delayed().keySerde().serializer(), values);
  }

  private static Map<String, Object> clientProps(String user, String password) {
    Map<String, Object> props = new HashMap<>(BrokerSecurity.clientProperties(user, password));
    props.put("bootstrap.servers", kafka.bootstrapServers());
    return props;
  }

  /** A read_committed reader as the super user (a test's view of the topics, not a component). */
  private static KafkaConsumer<byte[], byte[]> adminConsumer() {
    Map<String, Object> props = new HashMap<>(kafka.adminClientProperties());
    props.put("group.id", ItEnvironment.unique("secure-reader"));
    props.put("auto.offset.reset", "earliest");
    props.put("isolation.level", "read_committed");
    return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  private static ChatMessage message(String id) {
    return ChatMessage.newBuilder().setMessageId(id).setClientMsgId("c-" + id).setConversationId("conv-" + id)
        .setConversationType(ConversationType.DIRECT).setType(dev.impipe.avro.MessageType.MESSAGE)
        .setSenderId("alice").setRecipientId("bob").setBody("later " + id)
        .setSentAt(Instant.ofEpochMilli(1_700_000_000_000L)).build();
  }
}
