package dev.impipe.cli.grow;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The migration's transactional consume-transform-produce loop: each source partition in offset order, every batch
 * written in one transaction together with the consumer group's position, so a copy killed at any point resumes
 * after the last committed batch and writes every record exactly once.
 */
final class CopyLoop {

  private CopyLoop() {}

  /**
   * Copies {@code sources} (resuming at the group's committed offsets) up to their end now; {@code transform} makes
   * the record to write of each one read, null to drop it.
   *
   * @param consumer of the loop's own group (its committed offsets are the progress)
   */
  static void run(KafkaConsumer<byte[], byte[]> consumer, KafkaProducer<byte[], byte[]> producer,
      Collection<String> sources, Function<ConsumerRecord<byte[], byte[]>, ProducerRecord<byte[], byte[]>> transform,
      long maxRate, PrintStream out) {
    CopyProgress progress = MigrationClients.progress(consumer, sources);
    consumer.assign(progress.partitions().keySet());
    progress.partitions().forEach((tp, p) -> consumer.seek(tp, p.resumeAt()));
    out.println("copy: resuming at " + progress.describe());
    Map<TopicPartition, Long> committed = new HashMap<>();
    progress.partitions().forEach((tp, p) -> committed.put(tp, p.resumeAt()));
    RateLimit rate = new RateLimit(maxRate, System.nanoTime());
    while (!caughtUp(consumer, progress)) {
      ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
      if (records.isEmpty()) {
        continue;
      }
      producer.beginTransaction();
      for (ConsumerRecord<byte[], byte[]> r : records) {
        ProducerRecord<byte[], byte[]> copy = transform.apply(r);
        if (copy != null) {
          producer.send(copy);
        }
      }
      commitPositions(consumer, producer, committed);
      long waitNanos = rate.sent(records.count(), System.nanoTime());
      if (waitNanos > 0) {
        LockSupport.parkNanos(waitNanos);
      }
    }
    // Transaction markers after the last record move the position on without a record: commit that too, so
    // `bin/im inbox status` shows the copy as done.
    if (progress.partitions().keySet().stream().anyMatch(tp -> consumer.position(tp) > committed.get(tp))) {
      producer.beginTransaction();
      commitPositions(consumer, producer, committed);
    }
  }

  private static boolean caughtUp(KafkaConsumer<byte[], byte[]> consumer, CopyProgress progress) {
    return progress.partitions().entrySet().stream()
        .allMatch(e -> consumer.position(e.getKey()) >= e.getValue().end());
  }

  private static void commitPositions(KafkaConsumer<byte[], byte[]> consumer, KafkaProducer<byte[], byte[]> producer,
      Map<TopicPartition, Long> committed) {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (TopicPartition tp : consumer.assignment()) {
      offsets.put(tp, new OffsetAndMetadata(consumer.position(tp)));
    }
    producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
    producer.commitTransaction();
    offsets.forEach((tp, o) -> committed.put(tp, o.offset()));
  }
}
