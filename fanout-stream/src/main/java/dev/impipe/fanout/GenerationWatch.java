package dev.impipe.fanout;

import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.GenerationControl.Switch;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Follows the inbox switch control topic ({@link GenerationControl}) and holds the newest switch record for the
 * fan-out's {@code GenerationGate}. Its view may lag: the gate's correctness does not depend on when it sees a
 * phase (the fence is written in the task's transaction, the fenced generation is kept in the task's store), only
 * how soon a task fences and releases. A topic that does not exist yet is polled until it does.
 */
public final class GenerationWatch implements Supplier<Optional<Switch>>, AutoCloseable {

  private final AtomicReference<Optional<Switch>> current = new AtomicReference<>(Optional.empty());
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final CountDownLatch caughtUp = new CountDownLatch(1);
  private final Consumer<String, String> consumer;
  private final Thread thread;
  private final String topic;
  private final Duration recheck;

  public GenerationWatch(Map<String, Object> clientProperties, String topic) {
    this(consumer(clientProperties), topic, Duration.ofSeconds(1));
  }

  private static Consumer<String, String> consumer(Map<String, Object> clientProperties) {
    Map<String, Object> props = new HashMap<>(clientProperties);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.remove(ConsumerConfig.GROUP_ID_CONFIG);
    // Looking for the topic must not create it (with the broker's defaults instead of compacted).
    props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
  }

  /** Follows {@code topic} with {@code consumer}, looking for the topic every {@code recheck} while it is missing. */
  GenerationWatch(Consumer<String, String> consumer, String topic, Duration recheck) {
    this.topic = topic;
    this.consumer = consumer;
    this.recheck = recheck;
    this.thread = new Thread(this::loop, "fanout-generation-watch");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public Optional<Switch> get() {
    return current.get();
  }

  private void loop() {
    TopicPartition tp = new TopicPartition(topic, 0);
    try {
      if (!exists()) {
        // No switch was ever asked for: nothing to catch up with.
        caughtUp.countDown();
      }
      while (running.get() && !exists()) {
        // Until the first online grow creates it: look again every second.
        LockSupport.parkNanos(recheck.toNanos());
      }
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      while (running.get()) {
        if (consumer.position(tp) >= end) {
          caughtUp.countDown();
        }
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          if (GenerationControl.SWITCH_KEY.equals(r.key())) {
            Switch.decode(r.value()).ifPresent(s -> current.set(Optional.of(s)));
          }
        }
      }
    } catch (WakeupException e) {
      // closing
    } finally {
      consumer.close();
    }
  }

  /**
   * Waits until the control topic has been read to its end as of the start (or found missing), so the fan-out's
   * tasks start with the current switch; false if that took longer than {@code timeout}.
   */
  public boolean awaitCaughtUp(Duration timeout) throws InterruptedException {
    return caughtUp.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  private boolean exists() {
    try {
      List<PartitionInfo> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(5));
      return partitions != null && !partitions.isEmpty();
    } catch (org.apache.kafka.common.KafkaException e) {
      return false;
    }
  }

  @Override
  public void close() throws InterruptedException {
    running.set(false);
    consumer.wakeup();
    thread.join(10_000);
  }
}
