package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.Drain;
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

/** Fan-out on the real broker and registry, exactly-once, across a restart of the app. */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FanoutIT {

  @Test
  void everyMessageReachesEveryRecipientOnceInConversationOrderAcrossARestart() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("fanout") + ".";
    ImConfig config = ImConfig.fromEnv(Map.of("IM_TOPIC_PREFIX", prefix, "IM_CONVERSATION_PARTITIONS", "3",
        "IM_USER_PARTITIONS", "4", "IM_HTTP_PORT", "0",
        "IM_STATE_DIR", TestTmpDir.newDir("fanout-it").toString()))
        .withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    ImTopics topics = provision(config, names, env);
    Map<String, Object> producerProps = producerProperties(config);

    List<String> team = List.of("alice", "bob", "carol", "dave");
    Map<String, List<String>> expected = new HashMap<>(); // user -> messageIds in order per conversation
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(producerProps, new StringSerializer(), new ByteArraySerializer())) {
      for (String user : team) {
        send(producer, names.groupMembers(), "team", topics.groupMembers().valueSerde().serializer()
            .serialize(names.groupMembers(),
                new MembershipChange("team", user, MembershipOp.JOIN, Instant.now(), null, null)));
      }
      producer.flush();
      // Garbage on im.messages must not stop anything.
      producer.send(new ProducerRecord<>(names.messages(), "team", "not avro".getBytes(StandardCharsets.UTF_8)));

      try (PipelineRuntime first = start(config, topics)) {
        for (int i = 0; i < 30; i++) {
          publish(producer, topics, group("alice", "team", "g" + i), expected, team);
          publish(producer, topics, direct("bob", "carol", "d" + i), expected, List.of("bob", "carol"));
        }
        producer.flush();
        // Wait until the first instance has committed some fan-out (healthy() is true from start()), then stop it;
        // the rest of the input arrives while it is down, so the second instance has work left.
        try (KafkaConsumer<String, InboxEntry> probe = committedReader(config, names.inbox(), topics)) {
          int[] seen = {0};
          await().atMost(Duration.ofSeconds(60)).until(() -> {
            seen[0] += probe.poll(Duration.ofMillis(100)).count();
            return seen[0] > team.size();
          });
        }
      }
      for (int i = 30; i < 60; i++) {
        publish(producer, topics, group("carol", "team", "g" + i), expected, team);
        publish(producer, topics, direct("carol", "bob", "d" + i), expected, List.of("bob", "carol"));
      }
      producer.flush();
    }

    try (PipelineRuntime second = start(config, topics)) {
      int total = expected.values().stream().mapToInt(List::size).sum() + team.size(); // + JOINED entries
      List<ConsumerRecord<String, InboxEntry>> inbox = readCommitted(config, names, topics, total);

      // Exactly once: no duplicate (user, messageId); every expected entry present.
      Map<String, List<String>> seen = inbox.stream().filter(r -> r.value().getMessageId() != null)
          .collect(Collectors.groupingBy(ConsumerRecord::key,
              Collectors.mapping(r -> r.value().getMessageId(), Collectors.toList())));
      for (String user : team) {
        assertThat(seen.get(user)).as("inbox of " + user).doesNotHaveDuplicates()
            .containsExactlyInAnyOrderElementsOf(expected.get(user));
      }
      // Order: per user and conversation, conversation seqs ascend with inbox seqs (offsets).
      Map<String, List<ConsumerRecord<String, InboxEntry>>> byUserConversation = inbox.stream()
          .filter(r -> r.value().getConversationSeq() >= 0)
          .collect(Collectors.groupingBy(r -> r.key() + "|" + r.value().getConversationId()));
      byUserConversation.forEach((k, records) -> {
        List<Long> convSeqs = records.stream().sorted((a, b) -> Long.compare(a.offset(), b.offset()))
            .map(r -> r.value().getConversationSeq()).toList();
        assertThat(convSeqs).as(k).isSorted();
      });

      // The garbage record is in the rejected topic with the reason and its source.
      ConsumerRecord<byte[], byte[]> rejected = readCommittedBytes(config, names.rejected(), 1).get(0);
      assertThat(new String(rejected.value(), StandardCharsets.UTF_8)).isEqualTo("not avro");
      assertThat(header(rejected, "__streams.errors.topic")).isEqualTo(names.messages());
      assertThat(header(rejected, "__streams.errors.message")).contains("magic byte");
    }
  }

  @Test
  void aKilledFanoutLosesAndDuplicatesNothing() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("fanout-crash") + ".";
    java.nio.file.Path work = TestTmpDir.newDir("fanout-crash");
    Map<String, String> vars = Map.of("KAFKA_BOOTSTRAP_SERVERS", env.bootstrapServers(),
        "SCHEMA_REGISTRY_URL", env.schemaRegistryUrl(), "IM_TOPIC_PREFIX", prefix, "IM_HTTP_PORT", "0",
        "IM_STATE_DIR", work.resolve("state").toString(), "IM_CONVERSATION_PARTITIONS", "3",
        "IM_USER_PARTITIONS", "4",
        // A killed member leaves no goodbye: let the restarted one take over after 6 s, not 45 s.
        "KAFKA_SESSION_TIMEOUT_MS", "6000", "KAFKA_HEARTBEAT_INTERVAL_MS", "1000");
    ImConfig config = ImConfig.fromEnv(vars);
    TopicNames names = TopicNames.withPrefix(prefix);
    ImTopics topics = provision(config, names, env);
    Map<String, Object> producerProps = producerProperties(config);
    List<String> team = List.of("u1", "u2", "u3", "u4", "u5");
    Map<String, List<String>> expected = new HashMap<>();
    int total = team.size();

    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(producerProps, new StringSerializer(), new ByteArraySerializer())) {
      for (String user : team) {
        send(producer, names.groupMembers(), "crew", topics.groupMembers().valueSerde().serializer()
            .serialize(names.groupMembers(),
                new MembershipChange("crew", user, MembershipOp.JOIN, Instant.now(), null, null)));
      }
      dev.impipe.testkit.ChildPipeline child = dev.impipe.testkit.ChildPipeline
          .start(FanoutComponent.class, vars, work.resolve("child-1.log"));
      try {
        // While it works through 1,500 messages, kill it with SIGKILL mid-stream
        for (int i = 0; i < 1_500; i++) {
          publish(producer, topics, group(team.get(i % 5), "crew", "c" + i), expected, team);
        }
        producer.flush();
        KafkaConsumer<String, InboxEntry> probe = committedReader(config, names.inbox(), topics);
        int[] seen = {0};
        await().atMost(Duration.ofSeconds(60)).until(() -> {
          seen[0] += probe.poll(Duration.ofMillis(100)).count();
          return seen[0] > 1_000;
        });
        probe.close();
        // ... with more input arriving right before the kill
        for (int i = 1_500; i < 1_800; i++) {
          publish(producer, topics, group(team.get(i % 5), "crew", "c" + i), expected, team);
        }
        producer.flush();
      } finally {
        child.kill();
      }
      // The kill landed mid-work: input the killed app had not committed (its transaction is aborted)
      try (Admin admin = Admin.create(config.clientProperties())) {
        assertThat(Drain.lag(admin, prefix + FanoutTopology.APP_NAME, List.of(names.messages(),
            names.groupMembers()))).as("input records outstanding at the kill").isPositive();
      }
      // More input arrives while it is down
      for (int i = 1_800; i < 2_300; i++) {
        publish(producer, topics, direct("u" + (i % 5 + 1), "v" + (i % 7), "d" + i), expected,
            List.of("u" + (i % 5 + 1), "v" + (i % 7)));
      }
      producer.flush();
    }
    for (List<String> ids : expected.values()) {
      total += ids.size();
    }
    try (dev.impipe.testkit.ChildPipeline again = dev.impipe.testkit.ChildPipeline
        .start(FanoutComponent.class, vars, work.resolve("child-2.log"))) {
      List<ConsumerRecord<String, InboxEntry>> inbox = readCommitted(config, names, topics, total);
      Map<String, List<String>> got = inbox.stream().filter(r -> r.value().getMessageId() != null)
          .collect(Collectors.groupingBy(ConsumerRecord::key,
              Collectors.mapping(r -> r.value().getMessageId(), Collectors.toList())));
      expected.forEach((user, ids) -> assertThat(got.get(user)).as("inbox of " + user).doesNotHaveDuplicates()
          .containsExactlyInAnyOrderElementsOf(ids));
    }
  }

  /** Creates the pipeline's topics under the test's own prefix. */
  private static ImTopics provision(ImConfig config, TopicNames names, ItEnvironment.Endpoints env) throws Exception {
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    return new ImTopics(names, SchemaRegistryClients.forUrl(env.schemaRegistryUrl()));
  }

  private static Map<String, Object> producerProperties(ImConfig config) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("enable.idempotence", true);
    props.put("acks", "all");
    return props;
  }

  private static KafkaConsumer<String, InboxEntry> committedReader(ImConfig config, String topic, ImTopics topics) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("isolation.level", "read_committed");
    props.put("auto.offset.reset", "earliest");
    props.put("group.id", ItEnvironment.unique("probe"));
    KafkaConsumer<String, InboxEntry> consumer = new KafkaConsumer<>(props, topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    consumer.subscribe(Set.of(topic));
    return consumer;
  }

  private static PipelineRuntime start(ImConfig config, ImTopics topics) throws Exception {
    PipelineRuntime runtime =
        new PipelineRuntime(config, dev.impipe.edge.auth.TestTokens.env(Map.of("IM_HTTP_PORT", "0")), topics);
    runtime.start(List.of(new FanoutComponent()));
    await().atMost(Duration.ofSeconds(60)).until(runtime::healthy);
    return runtime;
  }

  private static void publish(KafkaProducer<String, byte[]> producer, ImTopics topics, ChatMessage m,
      Map<String, List<String>> expected, List<String> recipients) {
    send(producer, topics.messages().name(), m.getConversationId(),
        topics.messages().valueSerde().serializer().serialize(topics.messages().name(), m));
    recipients.forEach(u -> expected.computeIfAbsent(u, x -> new ArrayList<>()).add(m.getMessageId()));
  }

  private static void send(KafkaProducer<String, byte[]> producer, String topic, String key, byte[] value) {
    producer.send(new ProducerRecord<>(topic, key, value));
  }

  private static int ids;

  private static ChatMessage group(String from, String group, String body) {
    return base(from, body).setConversationId(group).setConversationType(ConversationType.GROUP)
        .setGroupId(group).build();
  }

  private static ChatMessage direct(String from, String to, String body) {
    return base(from, body).setConversationId(Ids.direct(from, to)).setConversationType(ConversationType.DIRECT)
        .setRecipientId(to).build();
  }

  private static ChatMessage.Builder base(String from, String body) {
    int n = ++ids;
    return ChatMessage.newBuilder().setMessageId("m" + n).setClientMsgId("c" + n).setType(MessageType.MESSAGE)
        .setSenderId(from).setBody(body).setSentAt(Instant.now()).setAttributes(Map.of());
  }

  /**
   * Waits for {@code count} committed inbox entries, then until the app has committed all its input, and returns
   * the inbox read to its end offsets: a late duplicate would be in there, however late it came.
   */
  private static List<ConsumerRecord<String, InboxEntry>> readCommitted(ImConfig config, TopicNames names,
      ImTopics topics, int count) {
    String topic = names.inbox();
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("isolation.level", "read_committed");
    props.put("auto.offset.reset", "earliest");
    props.put("group.id", ItEnvironment.unique("reader"));
    List<ConsumerRecord<String, InboxEntry>> out = new ArrayList<>();
    try (KafkaConsumer<String, InboxEntry> consumer = new KafkaConsumer<>(props,
        topics.inbox().keySerde().deserializer(), topics.inbox().valueSerde().deserializer())) {
      consumer.subscribe(Set.of(topic));
      await().atMost(Duration.ofSeconds(90)).until(() -> {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        return out.size() >= count;
      });
    }
    Drain.awaitCaughtUp(config.requireBootstrapServers(), config.topicPrefix() + FanoutTopology.APP_NAME,
        List.of(names.messages(), names.groupMembers()), Duration.ofSeconds(60));
    List<ConsumerRecord<String, InboxEntry>> all;
    try (KafkaConsumer<String, InboxEntry> consumer = new KafkaConsumer<>(props,
        topics.inbox().keySerde().deserializer(), topics.inbox().valueSerde().deserializer())) {
      all = Drain.readToEnd(consumer, topic, Duration.ofSeconds(60));
    }
    assertThat(all).as("everything in the inbox topic once the app caught up").hasSize(count);
    return all;
  }

  private static List<ConsumerRecord<byte[], byte[]>> readCommittedBytes(ImConfig config, String topic, int count) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("isolation.level", "read_committed");
    props.put("auto.offset.reset", "earliest");
    props.put("group.id", ItEnvironment.unique("reader"));
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(Set.of(topic));
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        return out.size() >= count;
      });
    }
    return out;
  }

  private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    var h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

}
