package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.runtime.config.ImConfig;
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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The delay component on the real broker and registry, exactly-once on: scheduled chat messages reach
 * {@code im.messages} once each and never before their time, a cancelled one never, and one that fell due while the
 * app was stopped is delivered after the restart (from a fresh state dir, i.e. restored from the changelog).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class DelayIT {

  @TempDir
  Path stateDir;

  /** A consumed record and when this test saw it. */
  private record Seen(ConsumerRecord<String, ChatMessage> record, long seenAtMs) {}

  @Test
  void scheduledMessagesArriveOnceNotEarlyCancelledOnesNeverAndDowntimeIsCaughtUp() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("delay") + ".";
    // A stopped Streams app does not leave its group: the restarted one waits out the old member's session.
    Map<String, String> vars = Map.of("IM_TOPIC_PREFIX", prefix, "IM_CONVERSATION_PARTITIONS", "3",
        "IM_USER_PARTITIONS", "3", "IM_HTTP_PORT", "0", "KAFKA_SESSION_TIMEOUT_MS", "6000");
    ImConfig config = ImConfig.fromEnv(vars).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl())
        .withHttpPort(0, stateDir.resolve("first"));
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    ScheduledMessages scheduler = new ScheduledMessages(topics);

    List<Seen> seen = new ArrayList<>();
    Map<String, Instant> dueById = new HashMap<>();
    try (KafkaProducer<String, ScheduleCommand> producer = producer(config, topics);
        KafkaConsumer<String, ChatMessage> consumer = consumer(config, topics)) {
      consumer.subscribe(Set.of(names.messages()));

      // Given: the delay app runs
      PipelineRuntime first = start(config, vars, topics);
      // When: four messages are scheduled 3-4 s ahead and one of them is cancelled
      Instant base = Instant.now().plusSeconds(3);
      for (String id : List.of("m1", "m2", "m3", "m4")) {
        Instant due = id.equals("m1") ? base : base.plusSeconds(1);
        dueById.put(id, due);
        producer.send(scheduler.record(scheduler.schedule(message(id), due)));
      }
      producer.send(scheduler.record(scheduler.cancel("m3", Instant.now())));
      // ... and m5, far enough ahead to still be pending when the app stops
      Instant m5Due = base.plusSeconds(6);
      dueById.put("m5", m5Due);
      producer.send(scheduler.record(scheduler.schedule(message("m5"), m5Due))).get(30, TimeUnit.SECONDS);

      // Then: m1, m2 and m4 arrive
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        poll(consumer, seen);
        assertThat(seen).extracting(s -> s.record().value().getMessageId()).contains("m1", "m2", "m4");
      });
      // When: the app stops with m5 still scheduled, and m5 falls due while it is down
      await().atMost(Duration.ofSeconds(30))
          .until(() -> first.metrics().get("im.delay.scheduled").gauge().value() == 1.0);
      first.close();
      await().atMost(Duration.ofSeconds(30)).until(() -> Instant.now().isAfter(m5Due.plusSeconds(1)));

      // ... and it starts again on an empty state dir (the schedule comes back from the changelog)
      PipelineRuntime second = start(config.withHttpPort(0, stateDir.resolve("second")), vars, topics);
      try {
        // Then: m5 is delivered after the restart, and then nothing is left to deliver
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
          poll(consumer, seen);
          assertThat(seen).extracting(s -> s.record().value().getMessageId()).contains("m5");
        });
        await().atMost(Duration.ofSeconds(30))
            .until(() -> second.metrics().get("im.delay.delivered").counter().count() >= 1.0);
        readToEnd(consumer, seen);
      } finally {
        second.close();
      }
    }

    // Then: exactly the uncancelled messages, once each, none before its time
    assertThat(seen).extracting(s -> s.record().value().getMessageId())
        .containsExactlyInAnyOrder("m1", "m2", "m4", "m5");
    for (Seen s : seen) {
      String id = s.record().value().getMessageId();
      Instant due = dueById.get(id);
      assertThat(s.record().key()).isEqualTo("conv-" + id);
      assertThat(s.record().value()).isEqualTo(message(id));
      assertThat(s.record().timestamp()).as("%s delivered at", id).isGreaterThanOrEqualTo(due.toEpochMilli());
      assertThat(s.seenAtMs()).as("%s seen at", id).isGreaterThanOrEqualTo(due.toEpochMilli());
      assertThat(new String(s.record().headers().lastHeader(DelayHeaders.SCHEDULED_AT).value(),
          StandardCharsets.UTF_8)).isEqualTo(Long.toString(due.toEpochMilli()));
    }
  }

  private static PipelineRuntime start(ImConfig config, Map<String, String> vars, ImTopics topics)
      throws Exception {
    PipelineRuntime runtime = new PipelineRuntime(config, dev.impipe.edge.auth.TestTokens.env(vars), topics);
    runtime.start(List.of(new DelayComponent()));
    await().atMost(Duration.ofSeconds(60)).until(runtime::healthy);
    return runtime;
  }

  private static ChatMessage message(String id) {
    return ChatMessage.newBuilder().setMessageId(id).setClientMsgId("c-" + id).setConversationId("conv-" + id)
        .setConversationType(ConversationType.DIRECT).setType(MessageType.MESSAGE).setSenderId("alice")
        .setRecipientId("bob").setBody("later " + id).setSentAt(Instant.ofEpochMilli(1_700_000_000_000L)).build();
  }

  private static KafkaProducer<String, ScheduleCommand> producer(ImConfig config, ImTopics topics) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("enable.idempotence", true);
    props.put("acks", "all");
    return new KafkaProducer<>(props, topics.delayed().keySerde().serializer(),
        topics.delayed().valueSerde().serializer());
  }

  private static KafkaConsumer<String, ChatMessage> consumer(ImConfig config, ImTopics topics) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("group.id", ItEnvironment.unique("delay-it"));
    props.put("auto.offset.reset", "earliest");
    props.put("isolation.level", "read_committed");
    return new KafkaConsumer<>(props, topics.messages().keySerde().deserializer(),
        topics.messages().valueSerde().deserializer());
  }

  private static void poll(KafkaConsumer<String, ChatMessage> consumer, List<Seen> seen) {
    consumer.poll(Duration.ofMillis(200)).forEach(r -> seen.add(new Seen(r, System.currentTimeMillis())));
  }

  /** Polls until the consumer has read every committed record there is now. */
  private static void readToEnd(KafkaConsumer<String, ChatMessage> consumer, List<Seen> seen) {
    Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
    await().atMost(Duration.ofSeconds(30)).until(() -> {
      poll(consumer, seen);
      return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
    });
  }
}
