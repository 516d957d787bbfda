package dev.impipe.cli.grow;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.TopicNames;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;

/**
 * {@code bin/im inbox status}: the generation in use, its partitions, and how far a migration to the next one is.
 * Reads offsets only (read_uncommitted, so an open transaction of a running or killed copy does not hold it up);
 * fences nothing.
 */
public final class GrowStatus {

  private GrowStatus() {}

  public static void print(ImConfig config, TopicNames base, int generation, PrintStream out) {
    TopicNames current = base.inGeneration(generation);
    TopicNames next = base.inGeneration(generation + 1);
    String id = InboxGrow.migrationId(config.topicPrefix(), generation + 1);
    Map<String, Object> props = MigrationClients.consumer(config, id, 500);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
      var topics = consumer.listTopics(Duration.ofSeconds(30));
      out.println("generation in use: " + generation + " (" + ImConfig.IM_INBOX_GENERATION + ")");
      out.println(line(current.inbox(), topics.get(current.inbox())));
      out.println("next generation " + (generation + 1) + ": " + line(next.inbox(), topics.get(next.inbox())));
      if (!topics.containsKey(current.inbox()) || !topics.containsKey(next.inbox())) {
        out.println("migration: not started (bin/im inbox grow --partitions N)");
        return;
      }
      CopyProgress inbox = MigrationClients.progress(consumer, List.of(current.inbox()));
      CopyProgress registrations = MigrationClients.progress(consumer, List.of(current.pushRegistrations()));
      CopyProgress cursors = MigrationClients.progress(consumer, List.of(current.deviceCursors()));
      boolean copied = inbox.done() && registrations.done();
      CopyProgress stores = storesProgress(config, topics.keySet(), generation);
      out.println("migration " + generation + " -> " + (generation + 1) + ": inbox " + inbox.describe()
          + ", push registrations " + registrations.describe() + ", device cursors "
          + (copied && cursors.done() ? "translated" : "pending") + ", inbox store state "
          + (stores.partitions().isEmpty() ? "none to carry" : stores.describe()));
      if (topics.containsKey(GenerationControl.topic(base))) {
        SwitchState sw = new OnlineSwitch(config, base, generation + 1, out).read();
        int tasks = topics.get(base.messages()) == null ? 0 : topics.get(base.messages()).size();
        out.println("online switch: " + sw.describe(tasks));
      }
      out.println(copied && cursors.done() && stores.done()
          ? "done: restart every app with " + ImConfig.IM_INBOX_GENERATION + "=" + (generation + 1)
          : "not done: run bin/im inbox grow again to resume");
    }
  }

  /** How far {@link StoreCarry} is (no partitions: no changelog of {@code generation} to carry). */
  private static CopyProgress storesProgress(ImConfig config, java.util.Set<String> topics, int generation) {
    List<String> sources = StoreCarry.sources(topics, config.topicPrefix(), generation);
    if (sources.isEmpty()) {
      return new CopyProgress(Map.of());
    }
    Map<String, Object> props = MigrationClients.consumer(config,
        StoreCarry.groupId(config.topicPrefix(), generation + 1), 500);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
      return MigrationClients.progress(consumer, sources);
    }
  }

  private static String line(String topic, List<?> partitions) {
    return topic + (partitions == null ? ": does not exist" : ": " + partitions.size() + " partitions");
  }
}
