package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.cli.Main;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import dev.impipe.testkit.ItEnvironment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/im inbox grow} on the real broker: generation 0 with 4 partitions, 59 users with 3 devices each and
 * committed cursors (and one group position each in a large group's timeline), grown to 8 partitions by a child JVM that is SIGKILLed halfway and run again. Every user's
 * entries are then in generation 1 exactly once and in order, and every device's translated cursor makes its next
 * sync return exactly the entries it had not seen.
 */
class InboxGrowIT {

  private static final int USERS = 60;
  private static final int DEVICES = 3;
  private static final String GROUP_TIMELINE = "#big";

  @TempDir
  Path tmp;

  @Test
  void growsFourToEightPartitionsAcrossASigkill() throws Exception {
    ItEnvironment.Endpoints it = ItEnvironment.get();
    String prefix = ItEnvironment.unique("grow") + ".";
    Map<String, String> env = Map.of(ImConfig.KAFKA_BOOTSTRAP_SERVERS, it.bootstrapServers(),
        ImConfig.SCHEMA_REGISTRY_URL, it.schemaRegistryUrl(), ImConfig.IM_TOPIC_PREFIX, prefix,
        ImConfig.IM_USER_PARTITIONS, "4", ImConfig.IM_CONVERSATION_PARTITIONS, "2",
        "IM_LOCAL_ENDPOINTS_FILE", tmp.resolve("none.properties").toString());
    ImConfig config = ImConfig.fromEnv(env);
    TopicNames g0 = TopicNames.withPrefix(prefix);
    TopicNames g1 = g0.inGeneration(1);
    ImTopics topics = new ImTopics(g0, new RestSchemaRegistryClient(it.schemaRegistryUrl()));
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(g0, config));
    }

    // Given generation 0: each user's entries (in transactions, some aborted), cursors of 3 devices, registrations
    Map<String, List<Long>> offsets = writeInbox(config, topics);
    Map<String, Long> oldCursors = writeCursorsAndRegistrations(config, topics, offsets);
    Map<String, List<String>> oldInbox = new HashMap<>();
    Map<String, Map<Long, String>> oldBySeq = readInbox(config, topics, g0.inbox(), oldInbox);
    assertThat(oldInbox).hasSize(USERS);
    long total = oldInbox.values().stream().mapToLong(List::size).sum();

    // When the migration runs in a child JVM, throttled, and is killed with SIGKILL with part of the inbox copied
    Path log = tmp.resolve("grow.log");
    Process first = start(env, log, "--batch", "20", "--max-rate", "500");
    String group = InboxGrow.migrationId(prefix, 1);
    try (Admin admin = Admin.create(config.clientProperties())) {
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
          .until(() -> committedInbox(admin, group, g0.inbox()) >= total / 4 || !first.isAlive());
      assertThat(first.isAlive()).as("still copying when killed; log:\n%s", Files.readString(log)).isTrue();
      first.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      long atKill = committedInbox(admin, group, g0.inbox());
      assertThat(atKill).as("killed halfway").isLessThan(total);
      System.out.printf(
          "InboxGrowIT: %d entries of %d keys (users and a group timeline); SIGKILL with %d inbox offsets committed%n",
          total,
          USERS, atKill);
    }

    // And it is run again, unthrottled
    Process second = start(env, log);
    assertThat(second.waitFor(60, TimeUnit.SECONDS)).as("second run finished; log:\n%s", Files.readString(log))
        .isTrue();
    assertThat(second.exitValue()).as("exit status; log:\n%s", Files.readString(log)).isZero();

    System.out.println("InboxGrowIT: migration log:\n" + Files.readString(log));

    // Then generation 1 has 8 partitions and every user's entries exactly once, in order, where Kafka puts the key
    Map<String, List<String>> newInbox = new HashMap<>();
    Map<String, Map<Long, String>> newBySeq = readInbox(config, topics, g1.inbox(), newInbox);
    assertThat(newInbox).isEqualTo(oldInbox);

    // And each device's next sync from its translated cursor returns exactly what it had not seen
    Map<String, Long> newCursors = readCursors(config, topics, g1.deviceCursors());
    assertThat(newCursors.keySet()).isEqualTo(oldCursors.keySet()).hasSize((USERS - 1) * (DEVICES + 1));
    oldCursors.forEach((userDevice, oldSeq) -> {
      String user = userDevice.contains("#") ? GROUP_TIMELINE : userDevice.substring(0, userDevice.indexOf('|'));
      List<String> unseenBefore = oldBySeq.get(user).entrySet().stream().filter(e -> e.getKey() > oldSeq)
          .map(Map.Entry::getValue).toList();
      List<String> syncedAfter = newBySeq.get(user).entrySet().stream()
          .filter(e -> e.getKey() > newCursors.get(userDevice)).map(Map.Entry::getValue).toList();
      assertThat(syncedAfter).as(userDevice).isEqualTo(unseenBefore);
    });
    assertThat(count(config, g1.pushRegistrations())).isEqualTo(USERS - 1);

    // And bin/im inbox status says it is done
    ByteArrayOutputStream status = new ByteArrayOutputStream();
    GrowStatus.print(config, g0, 0, new PrintStream(status, true, StandardCharsets.UTF_8));
    assertThat(status.toString(StandardCharsets.UTF_8)).contains("8 partitions", "(100%), push registrations",
        "device cursors translated");

    // And running it again changes nothing; another partition count for the started generation is refused
    ByteArrayOutputStream again = new ByteArrayOutputStream();
    new InboxGrow(config, topics, 0, new PrintStream(again, true, StandardCharsets.UTF_8))
        .run(new InboxGrow.Options(8, 500, 0));
    assertThat(again.toString(StandardCharsets.UTF_8)).contains("(100%)", "already translated");
    assertThat(readCursors(config, topics, g1.deviceCursors())).isEqualTo(newCursors);
    assertThat((long) count(config, g1.inbox())).isEqualTo(total);
    assertThatThrownBy(() -> new InboxGrow(config, topics, 0, new PrintStream(new ByteArrayOutputStream(), true,
        StandardCharsets.UTF_8)).run(new InboxGrow.Options(6, 500, 0)))
        .hasMessageContaining("exists with 8 partitions");
  }

  /** {@code bin/im inbox grow --partitions 8 <extra>} in a child JVM (so it can be SIGKILLed), output to {@code log}. */
  static Process start(Map<String, String> env, Path log, String... extra) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-cp", System.getProperty("java.class.path"), Main.class.getName(), "inbox", "grow",
        "--partitions", "8"));
    command.addAll(List.of(extra));
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(env);
    builder.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    return builder.start();
  }

  /** How far the grow's copy of {@code inbox} got: its group's committed offsets, summed. */
  static long committedInbox(Admin admin, String group, String inbox) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
        .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
    return offsets.entrySet().stream().filter(e -> e.getKey().topic().equals(inbox) && e.getValue() != null)
        .mapToLong(e -> e.getValue().offset()).sum();
  }

  /** 30 to 50 entries per user, 100 per transaction; every fifth transaction is aborted (never to be copied). */
  private static Map<String, List<Long>> writeInbox(ImConfig config, ImTopics topics) throws Exception {
    Map<String, List<Long>> offsets = new LinkedHashMap<>();
    try (KafkaProducer<String, InboxEntry> producer = new KafkaProducer<>(transactional(config, "seed-inbox"),
        new StringSerializer(), topics.inbox().valueSerde().serializer())) {
      producer.initTransactions();
      List<ProducerRecord<String, InboxEntry>> all = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        for (int u = 0; u < USERS; u++) {
          if (i < 30 + u % 21) {
            // the last "user" is a large group's timeline (key #big), read by members with a group position
            String user = u == USERS - 1 ? GROUP_TIMELINE : "user-" + u;
            all.add(new ProducerRecord<>(topics.inbox().name(), user, new InboxEntry(user, InboxEntryType.MESSAGE,
                "c-" + u, (long) i, user + "-m" + i, "s", "hi " + i, null, null, Instant.ofEpochMilli(1_000L + i),
                null, null, null, null, null, null, null, null, null, null)));
          }
        }
      }
      for (int from = 0, batch = 0; from < all.size(); from += 100, batch++) {
        List<ProducerRecord<String, InboxEntry>> chunk = all.subList(from, Math.min(all.size(), from + 100));
        producer.beginTransaction();
        List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
        chunk.forEach(r -> sent.add(producer.send(r)));
        producer.flush();
        if (batch % 5 == 4) {
          // An aborted copy of the batch before it is committed again: only the committed one counts
          producer.abortTransaction();
          producer.beginTransaction();
          sent.clear();
          chunk.forEach(r -> sent.add(producer.send(r)));
          producer.flush();
        }
        producer.commitTransaction();
        for (int k = 0; k < chunk.size(); k++) {
          offsets.computeIfAbsent(chunk.get(k).key(), x -> new ArrayList<>()).add(sent.get(k).get().offset());
        }
      }
    }
    return offsets;
  }

  /** Device d of a user has synced: d0 nothing (-1), d1 half (an older cursor first), d2 everything. */
  private static Map<String, Long> writeCursorsAndRegistrations(ImConfig config, ImTopics topics,
      Map<String, List<Long>> offsets) throws Exception {
    Map<String, Long> cursors = new HashMap<>();
    try (KafkaProducer<String, DeviceCursor> producer = new KafkaProducer<>(plain(config), new StringSerializer(),
        topics.deviceCursors().valueSerde().serializer());
        KafkaProducer<String, PushRegistration> registrations = new KafkaProducer<>(plain(config),
            new StringSerializer(), topics.pushRegistrations().valueSerde().serializer())) {
      List<Long> group = offsets.get(GROUP_TIMELINE);
      offsets.forEach((user, seqs) -> {
        if (user.equals(GROUP_TIMELINE)) {
          return;
        }
        // a group position of d0 (device id d0#big, inbox-store's SyncCursor.groupDevice): an offset of #big
        long groupSeq = group.get(Math.floorMod(user.hashCode(), 7) + 10);
        producer.send(new ProducerRecord<>(topics.deviceCursors().name(), user,
            new DeviceCursor(user, "d0#big", groupSeq)));
        cursors.put(user + "|d0#big", groupSeq);
        List<Long> cursorSeqs = List.of(-1L, seqs.get(seqs.size() / 2), seqs.get(seqs.size() - 1));
        producer.send(new ProducerRecord<>(topics.deviceCursors().name(), user,
            new DeviceCursor(user, "d1", seqs.get(2))));
        for (int d = 0; d < DEVICES; d++) {
          producer.send(new ProducerRecord<>(topics.deviceCursors().name(), user,
              new DeviceCursor(user, "d" + d, cursorSeqs.get(d))));
          cursors.put(user + "|d" + d, cursorSeqs.get(d));
        }
        registrations.send(new ProducerRecord<>(topics.pushRegistrations().name(), user, new PushRegistration(user,
            "d0", "r-" + user, PushProvider.WEBHOOK, false, null, "http://127.0.0.1:1/hook", null, null, null, null,
            Instant.ofEpochMilli(1_000L))));
      });
      producer.flush();
      registrations.flush();
    }
    return cursors;
  }

  /** Every user's messageIds in offset order into {@code byUser}; returns per user offset -> messageId. */
  private static Map<String, Map<Long, String>> readInbox(ImConfig config, ImTopics topics, String topic,
      Map<String, List<String>> byUser) {
    Map<String, Map<Long, String>> bySeq = new HashMap<>();
    var deserializer = topics.valueSerde(InboxEntry.class).deserializer();
    for (ConsumerRecord<byte[], byte[]> r : readAll(config, topic)) {
      InboxEntry e = deserializer.deserialize(topic, r.headers(), r.value());
      String user = new String(r.key(), StandardCharsets.UTF_8);
      assertThat(r.partition()).isEqualTo(Placement.partitionFor(r.key(), partitionCount(config, topic), -1));
      byUser.computeIfAbsent(user, u -> new ArrayList<>()).add(e.getMessageId());
      bySeq.computeIfAbsent(user, u -> new java.util.TreeMap<>()).put(r.offset(), e.getMessageId());
    }
    return bySeq;
  }

  private static Map<String, Long> readCursors(ImConfig config, ImTopics topics, String topic) {
    Map<String, Long> newest = new HashMap<>();
    var deserializer = topics.valueSerde(DeviceCursor.class).deserializer();
    for (ConsumerRecord<byte[], byte[]> r : readAll(config, topic)) {
      DeviceCursor c = deserializer.deserialize(topic, r.headers(), r.value());
      newest.put(c.getUserId() + "|" + c.getDeviceId(), c.getSeq());
    }
    return newest;
  }

  private static int count(ImConfig config, String topic) {
    return readAll(config, topic).size();
  }

  private static int partitionCount(ImConfig config, String topic) {
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(config)) {
      return consumer.partitionsFor(topic).size();
    }
  }

  /** Every committed record of {@code topic}, partition by partition in offset order. */
  private static List<ConsumerRecord<byte[], byte[]>> readAll(ImConfig config, String topic) {
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(config)) {
      List<TopicPartition> tps = consumer.partitionsFor(topic).stream()
          .map(p -> new TopicPartition(topic, p.partition())).toList();
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps);
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
      }
    }
    out.sort((a, b) -> a.partition() != b.partition() ? Integer.compare(a.partition(), b.partition())
        : Long.compare(a.offset(), b.offset()));
    return out;
  }

  private static KafkaConsumer<byte[], byte[]> consumer(ImConfig config) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  private static Map<String, Object> plain(ImConfig config) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    return props;
  }

  private static Map<String, Object> transactional(ImConfig config, String id) {
    Map<String, Object> props = plain(config);
    props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, config.topicPrefix() + id);
    return props;
  }
}
