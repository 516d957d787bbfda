package dev.impipe.cli.grow;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.GenerationControl.Phase;
import dev.impipe.runtime.topics.GenerationControl.Switch;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.runtime.topics.TopicSpec;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The control side of an online switch from generation g to g+1 (ADR 0014): the control topic
 * ({@link GenerationControl}), the switch records the grow writes (FENCE, then LIVE) and the wait for every fan-out
 * task's fence. Thin shell around {@link SwitchState}.
 */
final class OnlineSwitch {

  private final ImConfig config;
  private final String topic;
  private final int target;
  private final PrintStream out;

  OnlineSwitch(ImConfig config, TopicNames names, int target, PrintStream out) {
    this.config = config;
    this.topic = GenerationControl.topic(names);
    this.target = target;
    this.out = out;
  }

  /** Creates the control topic: one partition, compacted, kept forever. */
  void ensureTopic() {
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, config.replicationFactor()).ensure(List.of(new TopicSpec(topic, 1,
          Map.of("cleanup.policy", "compact", "retention.ms", "-1"), null)));
    }
  }

  /** The control topic up to its end now. */
  SwitchState read() {
    SwitchState state = new SwitchState(target);
    try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(MigrationClients.reader(config))) {
      MigrationClients.readAll(reader, MigrationClients.fromStart(reader, List.of(topic)),
          r -> state.apply(text(r.key()), text(r.value())));
    }
    return state;
  }

  /** Writes the switch record {@code phase} in its own transaction of the migration's producer. */
  void write(KafkaProducer<byte[], byte[]> producer, Phase phase) {
    producer.beginTransaction();
    producer.send(new ProducerRecord<>(topic, 0, bytes(GenerationControl.SWITCH_KEY),
        bytes(new Switch(target, phase).encode())));
    producer.commitTransaction();
    out.println("online switch: " + new Switch(target, phase).encode());
  }

  /**
   * Waits until every fan-out task (one per partition of {@code im.messages}) has written its fence: from then on
   * nothing more is written to generation g's inbox, so its end offsets are final.
   */
  void awaitFences(int tasks, Duration timeout) {
    SwitchState state = new SwitchState(target);
    TopicPartition tp = new TopicPartition(topic, 0);
    long deadline = System.nanoTime() + timeout.toNanos();
    try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(MigrationClients.reader(config))) {
      reader.assign(List.of(tp));
      reader.seekToBeginning(List.of(tp));
      while (!state.missing(tasks).isEmpty()) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("fan-out tasks " + state.missing(tasks) + " have not fenced generation "
              + (target - 1) + " within " + timeout.toSeconds() + " s: is the fan-out running? Run the grow again "
              + "to keep waiting (new entries are held back until then)");
        }
        for (ConsumerRecord<byte[], byte[]> r : reader.poll(Duration.ofMillis(200))) {
          state.apply(text(r.key()), text(r.value()));
        }
      }
    }
    out.println("online switch: all " + tasks + " fan-out tasks fenced generation " + (target - 1));
  }

  private static String text(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
