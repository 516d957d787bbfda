package dev.impipe.cli.grow;

import dev.impipe.avro.DeviceCursor;
import dev.impipe.inbox.PrevPosition;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.GenerationControl.Phase;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.runtime.topics.TopicSpec;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;

/**
 * {@code bin/im inbox grow}: copies inbox generation g to g+1 with more partitions (ADR 0014). The thin Kafka shell
 * around {@link Placement}, {@link PrevPosition}, {@link CopyProgress} and {@link CursorTranslation}:
 * <ol>
 *   <li>creates the g+1 user-keyed topics with N partitions;
 *   <li>copies {@code im.inbox} and {@code im.push-registrations} in a transactional consume-transform-produce loop,
 *       each source partition in offset order, committing its position in the same transaction (exactly once, and a
 *       restart resumes after the last committed batch);
 *   <li>translates the device cursors from the copied entries' {@code im.prev-seq} headers and writes them in one
 *       transaction with the old cursor topic's end offsets (so a restart either redoes it whole or skips it);
 *   <li>carries the inbox store's long-lived state over ({@link StoreCarry}, {@link CarriedStores}).
 * </ol>
 */
public final class InboxGrow {

  /**
   * How to grow: the new partition count, records per transaction, the rate cap (records/s, 0 = none); online: the
   * fan-out keeps running and is switched over ({@link OnlineSwitch}), waiting at most {@code fenceTimeout} for its
   * fences.
   */
  public record Options(int partitions, int batchRecords, long maxRate, boolean online, Duration fenceTimeout) {

    /** The offline migration (writers stopped). */
    public Options(int partitions, int batchRecords, long maxRate) {
      this(partitions, batchRecords, maxRate, false, Duration.ZERO);
    }
  }

  private final ImConfig config;
  private final ImTopics topics;
  private final int fromGeneration;
  private final PrintStream out;

  public InboxGrow(ImConfig config, ImTopics topics, int fromGeneration, PrintStream out) {
    this.config = config;
    this.topics = topics;
    this.fromGeneration = fromGeneration;
    this.out = out;
  }

  /** The transactional id and consumer group of the migration to {@code toGeneration}. */
  public static String migrationId(String topicPrefix, int toGeneration) {
    return topicPrefix + "inbox-grow.g" + toGeneration;
  }

  public void run(Options options) {
    TopicNames from = topics.names().inGeneration(fromGeneration);
    TopicNames to = topics.names().inGeneration(fromGeneration + 1);
    createTopics(from, to, options.partitions());
    String id = migrationId(config.topicPrefix(), fromGeneration + 1);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(MigrationClients.producer(config, id));
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(MigrationClients.consumer(config, id,
            options.batchRecords()))) {
      // Fences a migration still running (or killed) with this id and aborts its open transaction first, so the
      // committed offsets read next are the last committed batch's.
      producer.initTransactions();
      Map<String, String> copies = Map.of(from.inbox(), to.inbox(), from.pushRegistrations(), to.pushRegistrations());
      copy(consumer, producer, copies, to.inbox(), options);
      OnlineSwitch online = options.online() ? new OnlineSwitch(config, topics.names(), fromGeneration + 1, out) : null;
      if (online != null) {
        fence(online, producer, options.fenceTimeout());
        // Generation g's inbox is final now: copy its tail up to the fences.
        copy(consumer, producer, copies, to.inbox(), options);
      }
      out.println("copied " + from.inbox() + " -> " + to.inbox() + " and " + from.pushRegistrations() + " -> "
          + to.pushRegistrations());
      translateCursors(consumer, producer, from, to);
      new StoreCarry(config, fromGeneration, out).run(producer, to.inbox(), options.partitions(), options.maxRate());
      if (online != null) {
        online.write(producer, Phase.LIVE);
      }
    }
  }

  /** Asks the fan-out to fence generation g (unless g+1 is live already) and waits for every task's fence. */
  private void fence(OnlineSwitch online, KafkaProducer<byte[], byte[]> producer, Duration timeout) {
    online.ensureTopic();
    SwitchState state = online.read();
    if (state.live()) {
      out.println("online switch: generation " + (fromGeneration + 1) + " is live already");
      return;
    }
    online.write(producer, Phase.FENCE);
    int tasks = producer.partitionsFor(topics.names().messages()).size();
    online.awaitFences(tasks, timeout);
  }

  private void createTopics(TopicNames from, TopicNames to, int partitions) {
    try (Admin admin = Admin.create(config.clientProperties())) {
      if (!admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(from.inbox())) {
        throw new IllegalStateException("generation " + fromGeneration + " has no inbox topic " + from.inbox());
      }
      List<String> family = List.of(to.inbox(), to.deviceCursors(), to.deliveries(), to.acks(), to.ackTimeouts(),
          to.pushRegistrations(), to.notifications());
      List<TopicSpec> specs = TopicCatalog.specs(to, config).stream().filter(s -> family.contains(s.name()))
          .map(s -> new TopicSpec(s.name(), partitions, s.configs(), s.coPartitionGroup())).toList();
      List<String> created = new TopicProvisioner(admin, config.replicationFactor()).ensure(specs);
      int existing = admin.describeTopics(List.of(to.inbox())).allTopicNames().get(30, TimeUnit.SECONDS)
          .get(to.inbox()).partitions().size();
      if (existing != partitions) {
        // A resumed migration must copy into the layout it started with: a user's entries in two layouts would
        // break their order.
        throw new IllegalStateException(to.inbox() + " exists with " + existing + " partitions, not " + partitions
            + ": resume with --partitions " + existing + ", or delete generation " + (fromGeneration + 1)
            + "'s topics to start over");
      }
      out.println("generation " + (fromGeneration + 1) + ": " + created.size() + " topics created, "
          + (specs.size() - created.size()) + " already there (" + partitions + " partitions)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted");
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("cannot list topics: " + e.getMessage(), e);
    }
  }

  private void copy(KafkaConsumer<byte[], byte[]> consumer, KafkaProducer<byte[], byte[]> producer,
      Map<String, String> copies, String newInbox, Options options) {
    Map<String, Integer> partitionsOf = new HashMap<>();
    copies.values().forEach(t -> partitionsOf.put(t, producer.partitionsFor(t).size()));
    CopyLoop.run(consumer, producer, copies.keySet(), r -> {
      String target = copies.get(r.topic());
      RecordHeaders headers = new RecordHeaders(r.headers().toArray());
      if (target.equals(newInbox)) {
        new PrevPosition(fromGeneration, r.offset()).writeTo(headers);
      }
      int partition = Placement.partitionFor(r.key(), partitionsOf.get(target), r.partition());
      return new ProducerRecord<>(target, partition, r.timestamp(), r.key(), r.value(), headers);
    }, options.maxRate(), out);
  }

  private void translateCursors(KafkaConsumer<byte[], byte[]> consumer, KafkaProducer<byte[], byte[]> producer,
      TopicNames from, TopicNames to) {
    CopyProgress cursors = MigrationClients.progress(consumer, List.of(from.deviceCursors()));
    if (cursors.done()) {
      out.println("device cursors: already translated (or none)");
      return;
    }
    var cursorSerde = topics.valueSerde(DeviceCursor.class);
    CursorTranslation translation = new CursorTranslation();
    try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(MigrationClients.reader(config))) {
      MigrationClients.readAll(reader, MigrationClients.fromStart(reader, List.of(from.deviceCursors())), r -> {
        DeviceCursor c = cursorSerde.deserializer().deserialize(r.topic(), r.headers(), r.value());
        translation.oldCursor(c.getUserId(), c.getDeviceId(), c.getSeq());
      });
    }
    try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(MigrationClients.reader(config))) {
      MigrationClients.readAll(reader, MigrationClients.fromStart(reader, List.of(to.inbox())),
          r -> PrevPosition.readFrom(r.headers()).filter(p -> p.generation() == fromGeneration && r.key() != null)
              .ifPresent(p -> translation.copiedEntry(new String(r.key(), StandardCharsets.UTF_8), p.seq(),
                  r.offset())));
    }
    Serializer<DeviceCursor> serializer = cursorSerde.serializer();
    int partitions = producer.partitionsFor(to.deviceCursors()).size();
    producer.beginTransaction();
    for (CursorTranslation.Translated t : translation.result()) {
      byte[] key = t.userId().getBytes(StandardCharsets.UTF_8);
      byte[] value = serializer.serialize(to.deviceCursors(), new DeviceCursor(t.userId(), t.deviceId(), t.newSeq()));
      producer.send(new ProducerRecord<>(to.deviceCursors(), Placement.partitionFor(key, partitions, 0), key, value));
    }
    Map<TopicPartition, OffsetAndMetadata> done = new HashMap<>();
    cursors.partitions().forEach((tp, p) -> done.put(tp, new OffsetAndMetadata(p.end())));
    producer.sendOffsetsToTransaction(done, consumer.groupMetadata());
    producer.commitTransaction();
    out.println("device cursors: " + translation.devices() + " translated into " + to.deviceCursors());
  }
}
