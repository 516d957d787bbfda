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
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.ChildPipeline;
import dev.impipe.testkit.Drain;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A group at its size cap switching to read diffusion on the real broker, with the fan-out killed (SIGKILL) in the
 * middle of the switch's rounds: the join beyond the cap is refused, and after the restart every member has exactly
 * one CONVERSATION_MODE entry, the messages sent around the switch are once in the group's timeline, in no inbox.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ModeSwitchIT {

  private static final int MEMBERS = 2_000;
  private static final int PER_ROUND = 25;

  @Test
  void aSwitchKilledBetweenRoundsResumesAndTellsEveryMemberOnce() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("mode-switch") + ".";
    Path work = TestTmpDir.newDir("mode-switch");
    Map<String, String> vars = Map.ofEntries(Map.entry("KAFKA_BOOTSTRAP_SERVERS", env.bootstrapServers()),
        Map.entry("SCHEMA_REGISTRY_URL", env.schemaRegistryUrl()), Map.entry("IM_TOPIC_PREFIX", prefix),
        Map.entry("IM_HTTP_PORT", "0"), Map.entry("IM_STATE_DIR", work.resolve("state").toString()),
        Map.entry("IM_CONVERSATION_PARTITIONS", "3"), Map.entry("IM_USER_PARTITIONS", "4"),
        Map.entry(FanoutConfig.IM_LARGE_GROUP_THRESHOLD, "10"),
        Map.entry(FanoutConfig.IM_GROUP_MAX_MEMBERS, Integer.toString(MEMBERS)),
        // 80 rounds of 25, one each 250 ms: the switch takes about 20 s, long enough to be killed in the middle
        Map.entry(FanoutConfig.IM_FANOUT_MAX_ENTRIES_PER_ROUND, Integer.toString(PER_ROUND)),
        Map.entry(FanoutConfig.IM_FANOUT_MODE_SWITCH_INTERVAL, "250ms"),
        // A killed member leaves no goodbye: let the restarted one take over after 6 s, not 45 s.
        Map.entry("KAFKA_SESSION_TIMEOUT_MS", "6000"), Map.entry("KAFKA_HEARTBEAT_INTERVAL_MS", "1000"));
    ImConfig config = ImConfig.fromEnv(vars);
    TopicNames names = TopicNames.withPrefix(prefix);
    ImTopics topics;
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    topics = new ImTopics(names, SchemaRegistryClients.forUrl(env.schemaRegistryUrl()));
    List<String> team = new ArrayList<>();
    for (int i = 0; i < MEMBERS; i++) {
      team.add(String.format("u%04d", i));
    }
    Map<String, Object> producerProps = new HashMap<>(config.clientProperties());
    producerProps.put("enable.idempotence", true);
    producerProps.put("acks", "all");

    Set<String> toldBeforeKill = new HashSet<>();
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(producerProps, new StringSerializer(), new ByteArraySerializer())) {
      // Given a group at its cap (the admin adds everyone), and one more added beyond it
      for (String user : team) {
        join(producer, topics, "big", user, team.get(0));
      }
      join(producer, topics, "big", "u9999", team.get(0));
      ChildPipeline child = ChildPipeline.start(FanoutComponent.class, vars, work.resolve("child-1.log"));
      try {
        // When a message switches it to read diffusion, and another follows while the rounds go on
        publish(producer, topics, message("m1", team.get(1)));
        producer.flush();
        try (KafkaConsumer<String, InboxEntry> probe = committedReader(config, names.inbox(), topics)) {
          await().atMost(Duration.ofSeconds(90)).until(() -> {
            probe.poll(Duration.ofMillis(100)).forEach(r -> {
              if (r.value().getType() == InboxEntryType.CONVERSATION_MODE) {
                toldBeforeKill.add(r.key());
              }
            });
            return toldBeforeKill.size() >= 10 * PER_ROUND;
          });
        }
        publish(producer, topics, message("m2", team.get(2)));
        producer.flush();
      } finally {
        // ... and the fan-out is killed in the middle of the switch
        child.kill();
      }
    }
    List<ConsumerRecord<String, InboxEntry>> atKill = readToEnd(config, names, topics);
    long modesAtKill = atKill.stream().filter(r -> r.value().getType() == InboxEntryType.CONVERSATION_MODE).count();
    assertThat(modesAtKill).as("members told when the fan-out was killed").isBetween((long) 10 * PER_ROUND,
        (long) MEMBERS - 1);

    // Then after a restart the rounds go on from where the last committed one stopped
    try (ChildPipeline again = ChildPipeline.start(FanoutComponent.class, vars, work.resolve("child-2.log"))) {
      try (KafkaConsumer<String, InboxEntry> probe = committedReader(config, names.inbox(), topics)) {
        Set<String> told = new HashSet<>();
        await().atMost(Duration.ofSeconds(120)).until(() -> {
          probe.poll(Duration.ofMillis(200)).forEach(r -> {
            if (r.value().getType() == InboxEntryType.CONVERSATION_MODE) {
              told.add(r.key());
            }
          });
          return told.size() >= MEMBERS;
        });
      }
      Drain.awaitCaughtUp(config.requireBootstrapServers(), prefix + FanoutTopology.APP_NAME,
          List.of(names.messages(), names.groupMembers()), Duration.ofSeconds(60));
      List<ConsumerRecord<String, InboxEntry>> inbox = readToEnd(config, names, topics);

      // Every member told exactly once, from m1's seq; the joiner beyond the cap never
      Map<String, Long> modes = inbox.stream().filter(r -> r.value().getType() == InboxEntryType.CONVERSATION_MODE)
          .collect(Collectors.groupingBy(ConsumerRecord::key, Collectors.counting()));
      assertThat(modes).hasSize(MEMBERS).containsOnlyKeys(team).allSatisfy((user, n) -> assertThat(n).isOne());
      Set<Long> from = inbox.stream().filter(r -> r.value().getType() == InboxEntryType.CONVERSATION_MODE)
          .map(r -> r.value().getTimelineFromSeq()).collect(Collectors.toSet());
      // m1 and m2 are once each in the group's timeline, m1 at the switch's seq, and in nobody's inbox
      Map<String, ConsumerRecord<String, InboxEntry>> timeline = inbox.stream()
          .filter(r -> r.key().equals("#big") && r.value().getType() == InboxEntryType.MESSAGE)
          .collect(Collectors.toMap(r -> r.value().getMessageId(), Function.identity()));
      assertThat(timeline).containsOnlyKeys("m1", "m2");
      assertThat(from).containsExactly(timeline.get("m1").value().getConversationSeq());
      assertThat(inbox).filteredOn(r -> !r.key().startsWith("#") && r.value().getType() == InboxEntryType.MESSAGE)
          .isEmpty();
      assertThat(inbox).filteredOn(r -> r.key().equals("u9999")).isEmpty();
    }
    // And the join beyond the cap is in im.rejected, with its reason
    List<String> codes = rejectedCodes(config, names.rejected());
    assertThat(codes).containsExactly("GROUP_FULL");
  }

  private static void join(KafkaProducer<String, byte[]> producer, ImTopics topics, String group, String user,
      String admin) {
    MembershipChange change = MembershipChange.newBuilder().setGroupId(group).setUserId(user)
        .setOp(MembershipOp.JOIN).setAt(Instant.now()).setActorId(admin).build();
    producer.send(new ProducerRecord<>(topics.groupMembers().name(), group,
        topics.groupMembers().valueSerde().serializer().serialize(topics.groupMembers().name(), change)));
  }

  private static void publish(KafkaProducer<String, byte[]> producer, ImTopics topics, ChatMessage m) {
    producer.send(new ProducerRecord<>(topics.messages().name(), m.getConversationId(),
        topics.messages().valueSerde().serializer().serialize(topics.messages().name(), m)));
  }

  private static ChatMessage message(String id, String from) {
    return ChatMessage.newBuilder().setMessageId(id).setClientMsgId("c-" + id).setType(MessageType.MESSAGE)
        .setConversationId("big").setConversationType(ConversationType.GROUP).setGroupId("big").setSenderId(from)
        .setBody("hello " + id).setSentAt(Instant.now()).setAttributes(Map.of()).build();
  }

  private static Map<String, Object> readerProps(ImConfig config) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("isolation.level", "read_committed");
    props.put("auto.offset.reset", "earliest");
    props.put("group.id", ItEnvironment.unique("reader"));
    return props;
  }

  private static KafkaConsumer<String, InboxEntry> committedReader(ImConfig config, String topic, ImTopics topics) {
    KafkaConsumer<String, InboxEntry> consumer = new KafkaConsumer<>(readerProps(config),
        topics.inbox().keySerde().deserializer(), topics.inbox().valueSerde().deserializer());
    consumer.subscribe(Set.of(topic));
    return consumer;
  }

  private static List<ConsumerRecord<String, InboxEntry>> readToEnd(ImConfig config, TopicNames names,
      ImTopics topics) {
    try (KafkaConsumer<String, InboxEntry> consumer = new KafkaConsumer<>(readerProps(config),
        topics.inbox().keySerde().deserializer(), topics.inbox().valueSerde().deserializer())) {
      return Drain.readToEnd(consumer, names.inbox(), Duration.ofSeconds(60));
    }
  }

  private static List<String> rejectedCodes(ImConfig config, String topic) {
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(readerProps(config), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      return Drain.readToEnd(consumer, topic, Duration.ofSeconds(60)).stream().map(r -> {
        var h = r.headers().lastHeader("im.reject.code");
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
      }).toList();
    }
  }
}
