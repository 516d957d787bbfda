package dev.impipe.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.InboxEntry;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Causality on the real broker (what a member sends after their join was acknowledged is accepted; nothing sent
 * after their leave was acknowledged reaches them): two ingest publishers whose clocks are 90 s apart (each
 * stamps its records with its own clock, as a producer on another host would) take a group's joins, posts and a
 * leave, each acknowledged before the next; the fan-out starts only afterwards, so it sees the whole backlog at
 * once and cannot be saved by timing. The member who just joined is never refused; the one who left gets nothing
 * sent after the leave was acknowledged.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class MembershipCausalityIT {

  @Test
  void joinThenSendIsNeverRefusedAndALeaverGetsNothingSentAfterTheLeaveWhateverTheClocks() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("causality") + ".";
    ImConfig config = ImConfig.fromEnv(Map.of("IM_TOPIC_PREFIX", prefix, "IM_CONVERSATION_PARTITIONS", "3",
        "IM_USER_PARTITIONS", "4", "IM_HTTP_PORT", "0",
        "IM_STATE_DIR", TestTmpDir.newDir("causality-it").toString()))
        .withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, SchemaRegistryClients.forUrl(env.schemaRegistryUrl()));
    Clock ahead = Clock.offset(Clock.systemUTC(), Duration.ofSeconds(90));
    Clock behind = Clock.offset(Clock.systemUTC(), Duration.ofSeconds(-90));

    try (MessagePublisher fast = new MessagePublisher(topics, config.clientProperties(), IngestConfig.defaults(),
        ahead); MessagePublisher slow =
            new MessagePublisher(topics, config.clientProperties(),
                IngestConfig.defaults(), behind)) {
      // Given alice creates "club" and adds bob through the instance whose clock is ahead
      fast.join("alice", "club", "alice").get(30, TimeUnit.SECONDS);
      fast.join("alice", "club", "bob").get(30, TimeUnit.SECONDS);
      // When bob, just added, posts through the instance whose clock is behind (stamped before his join)
      slow.send(new SendRequest("bob", null, null, "club", "hello", "c-hello", null)).get(30, TimeUnit.SECONDS);
      // And bob leaves (ahead), then alice posts (behind: stamped before the leave)
      fast.leave("bob", "club", "bob").get(30, TimeUnit.SECONDS);
      slow.send(new SendRequest("alice", null, null, "club", "after bob left", "c-after", null))
          .get(30, TimeUnit.SECONDS);
    }

    PipelineRuntime runtime = new PipelineRuntime(config, TestTokens.env(Map.of("IM_HTTP_PORT", "0")), topics);
    try (runtime) {
      runtime.start(List.of(new FanoutComponent()));
      await().atMost(Duration.ofSeconds(60)).until(runtime::healthy);

      // Then (read_committed) bob's post reached both, alice's later post only alice, and nothing was refused
      List<ConsumerRecord<String, InboxEntry>> inbox = readCommitted(config, topics, 6);
      assertThat(inbox).extracting(r -> r.key() + ":" + r.value().getType() + ":" + r.value().getBody())
          .containsExactlyInAnyOrder("alice:CONVERSATION_JOINED:null", "bob:CONVERSATION_JOINED:null",
              "alice:MESSAGE:hello", "bob:MESSAGE:hello", "bob:CONVERSATION_LEFT:null",
              "alice:MESSAGE:after bob left");
    }
  }

  private static List<ConsumerRecord<String, InboxEntry>> readCommitted(ImConfig config, ImTopics topics,
      int count) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put("isolation.level", "read_committed");
    props.put("auto.offset.reset", "earliest");
    props.put("group.id", ItEnvironment.unique("reader"));
    List<ConsumerRecord<String, InboxEntry>> out = new ArrayList<>();
    try (KafkaConsumer<String, InboxEntry> consumer = new KafkaConsumer<>(props,
        topics.inbox().keySerde().deserializer(), topics.inbox().valueSerde().deserializer())) {
      consumer.subscribe(Set.of(topics.inbox().name()));
      // Up to 90 s for the expected count (a shortfall is then shown by the caller's assertion, with what came)
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (out.size() < count && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
      }
      // Anything beyond the expected count (a REJECTED, a post to the leaver) would be wrong: let it show up.
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
      while (System.nanoTime() < until) {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
      }
    }
    return out;
  }
}
