package dev.impipe.cli.grow;

import dev.impipe.inbox.PrevPosition;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.runtime.topics.TopicSpec;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The shell of {@link CarriedStores}: creates the g+1 changelogs (the new partition count, compacted, as Kafka
 * Streams would) and copies the g changelogs into them with {@link CopyLoop} under its own consumer group
 * ({@link #groupId}), each record to its user's partition, {@code large-groups} values translated with a
 * {@link SeqTranslation} read from the copied inbox's {@code im.prev-seq} headers. Run after the inbox copy and
 * before the inbox store starts at g+1, which then restores the stores from these changelogs.
 */
final class StoreCarry {

  private final ImConfig config;
  private final int fromGeneration;
  private final PrintStream out;

  StoreCarry(ImConfig config, int fromGeneration, PrintStream out) {
    this.config = config;
    this.fromGeneration = fromGeneration;
    this.out = out;
  }

  /** The consumer group whose committed offsets on the g changelogs are the carry's progress. */
  static String groupId(String topicPrefix, int toGeneration) {
    return InboxGrow.migrationId(topicPrefix, toGeneration) + ".stores";
  }

  /** The g changelogs that exist (an inbox store that never ran at g has none). */
  static List<String> sources(Set<String> existingTopics, String topicPrefix, int fromGeneration) {
    return CarriedStores.STORES.stream().map(s -> CarriedStores.changelog(topicPrefix, fromGeneration, s.name()))
        .filter(existingTopics::contains).toList();
  }

  void run(KafkaProducer<byte[], byte[]> producer, String newInbox, int partitions, long maxRate) {
    String prefix = config.topicPrefix();
    int to = fromGeneration + 1;
    List<String> sources;
    try (Admin admin = Admin.create(config.clientProperties())) {
      sources = sources(admin.listTopics().names().get(30, TimeUnit.SECONDS), prefix, fromGeneration);
      createTargets(admin, sources, partitions);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted");
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot list topics: " + e.getMessage(), e);
    }
    if (sources.isEmpty()) {
      out.println("inbox store state: no changelog of generation " + fromGeneration + " to carry over");
      return;
    }
    String group = groupId(prefix, to);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(MigrationClients.consumer(config, group,
        500))) {
      if (MigrationClients.progress(consumer, sources).done()) {
        out.println("inbox store state: already carried over (" + String.join(", ", sources) + ")");
        return;
      }
      SeqTranslation seqs = seqsToTranslate(sources, newInbox);
      AtomicLong skipped = new AtomicLong();
      Map<String, Integer> targetPartitions = new HashMap<>();
      CopyLoop.run(consumer, producer, sources, r -> {
        CarriedStores.Store store = CarriedStores.storeOf(prefix, fromGeneration, r.topic()).orElseThrow();
        String target = CarriedStores.changelog(prefix, to, store.name());
        Optional<byte[]> user = CarriedStores.userOf(r.key());
        if (user.isEmpty()) {
          skipped.incrementAndGet(); // no user to place it with: no query could find it either
          return null;
        }
        byte[] value = r.value();
        if (store.inboxSeqs()) {
          String userId = new String(user.get(), StandardCharsets.UTF_8);
          value = CarriedStores.translateLargeGroups(value, seq -> seqs.translate(userId, seq));
        }
        int partition = Placement.partitionFor(user.get(), targetPartitions.computeIfAbsent(target,
            t -> producer.partitionsFor(t).size()), r.partition());
        return new ProducerRecord<>(target, partition, r.timestamp(), r.key(), value, r.headers());
      }, maxRate, out);
      out.println("inbox store state: " + String.join(", ", sources) + " carried over to generation " + to
          + (skipped.get() > 0 ? " (" + skipped.get() + " records without a user id left out)" : ""));
    }
  }

  private void createTargets(Admin admin, List<String> sources, int partitions)
      throws InterruptedException, ExecutionException, TimeoutException {
    Map<String, String> configs = new HashMap<>(Map.of("cleanup.policy", "compact"));
    if (config.replicationFactor() >= 3) {
      configs.put("min.insync.replicas", "2"); // as StreamsDefaults sets for the changelogs it creates
    }
    List<TopicSpec> specs = new ArrayList<>();
    for (String source : sources) {
      String store = CarriedStores.storeOf(config.topicPrefix(), fromGeneration, source).orElseThrow().name();
      specs.add(new TopicSpec(CarriedStores.changelog(config.topicPrefix(), fromGeneration + 1, store), partitions,
          configs, null));
    }
    new TopicProvisioner(admin, config.replicationFactor()).ensure(specs);
    for (TopicSpec spec : specs) {
      int existing = admin.describeTopics(List.of(spec.name())).allTopicNames().get(30, TimeUnit.SECONDS)
          .get(spec.name()).partitions().size();
      if (existing != partitions) {
        throw new IllegalStateException(spec.name() + " exists with " + existing + " partitions, not "
            + partitions + ": the inbox store of generation " + (fromGeneration + 1) + " could not restore it");
      }
    }
  }

  /**
   * The inbox seqs the {@code large-groups} values hold, each resolved to its copy's offset in {@code newInbox}
   * (read whole: the copy is complete and nothing writes to it before the switch).
   */
  private SeqTranslation seqsToTranslate(List<String> sources, String newInbox) {
    SeqTranslation seqs = new SeqTranslation();
    List<String> withSeqs = sources.stream().filter(t -> CarriedStores.storeOf(config.topicPrefix(),
        fromGeneration, t).orElseThrow().inboxSeqs()).toList();
    if (withSeqs.isEmpty()) {
      return seqs;
    }
    try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(MigrationClients.reader(config))) {
      MigrationClients.readAll(reader, MigrationClients.fromStart(reader, withSeqs), r -> wanted(seqs, r));
    }
    if (seqs.isEmpty()) {
      return seqs;
    }
    try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(MigrationClients.reader(config))) {
      MigrationClients.readAll(reader, MigrationClients.fromStart(reader, List.of(newInbox)),
          r -> PrevPosition.readFrom(r.headers()).filter(p -> p.generation() == fromGeneration && r.key() != null)
              .ifPresent(p -> seqs.copiedEntry(new String(r.key(), StandardCharsets.UTF_8), p.seq(), r.offset())));
    }
    return seqs;
  }

  private static void wanted(SeqTranslation seqs, ConsumerRecord<byte[], byte[]> r) {
    Optional<byte[]> user = CarriedStores.userOf(r.key());
    if (user.isEmpty()) {
      return;
    }
    String userId = new String(user.get(), StandardCharsets.UTF_8);
    CarriedStores.inboxSeqs(r.value()).forEach(seq -> seqs.wanted(userId, seq));
  }
}
