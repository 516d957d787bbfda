package dev.impipe.ack.it;

import dev.impipe.avro.AckTimeout;
import dev.impipe.runtime.topics.ImTopics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/** Reads {@code im.ack-timeouts} from the beginning, read_committed, keeping everything it saw. */
final class TimeoutReader implements AutoCloseable {

  private final KafkaConsumer<String, AckTimeout> consumer;
  private final List<AckWheelIT.Timed> seen = new ArrayList<>();

  TimeoutReader(String bootstrap, ImTopics topics) {
    consumer = new KafkaConsumer<>(Map.of("bootstrap.servers", bootstrap, "isolation.level", "read_committed",
        "auto.offset.reset", "earliest"), topics.ackTimeouts().keySerde().deserializer(),
        topics.ackTimeouts().valueSerde().deserializer());
    List<TopicPartition> partitions = consumer.partitionsFor(topics.ackTimeouts().name()).stream()
        .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
  }

  /** Polls until the records seen so far carry {@code seqs} seqs in all; returns every record seen. */
  List<AckWheelIT.Timed> readUntil(int seqs, Duration atMost) {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (seqs().size() < seqs && System.nanoTime() < deadline) {
      poll();
    }
    return List.copyOf(seen);
  }

  /**
   * Reads up to the topic's end offsets as of now (read_committed: its last stable offset); call it once the wheel
   * has caught up, so a late duplicate is in there however late it came.
   */
  void readToEnd(Duration atMost) {
    Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
    long deadline = System.nanoTime() + atMost.toNanos();
    while (!end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("ack-timeouts not read to " + end + " in " + atMost);
      }
      poll();
    }
  }

  /** Every seq seen, one element per occurrence, as {@code user/device#seq}. */
  List<String> seqs() {
    List<String> out = new ArrayList<>();
    for (AckWheelIT.Timed t : seen) {
      for (long seq : t.value().getSeqs()) {
        out.add(AckWheelIT.id(t.value().getUserId(), t.value().getDeviceId(), seq));
      }
    }
    return out;
  }

  List<AckWheelIT.Timed> records() {
    return List.copyOf(seen);
  }

  private void poll() {
    var records = consumer.poll(Duration.ofMillis(100));
    long now = System.currentTimeMillis();
    for (ConsumerRecord<String, AckTimeout> r : records) {
      seen.add(new AckWheelIT.Timed(r.value(), r.timestamp(), now));
    }
  }

  @Override
  public void close() {
    consumer.close();
  }
}
