package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A {@code read_committed} (or {@code read_uncommitted}) consumer of every partition of one topic, from its end at
 * start-up, on a thread of its own: what a syncing device would see, and when. The handler runs on that thread, right
 * after each poll.
 */
final class TopicWatcher implements AutoCloseable {

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Thread thread;
  private final AtomicLong seen = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final CountDownLatch ready = new CountDownLatch(1);
  private volatile boolean running = true;

  TopicWatcher(BenchCluster cluster, String topic, Consumer<ConsumerRecord<byte[], byte[]>> handler)
      throws Exception {
    this(cluster, topic, true, handler);
  }

  /**
   * @param committed {@code read_committed} (what a device sees) if true, else {@code read_uncommitted}: records
   *     as soon as the broker has appended them, before their transaction ends
   */
  TopicWatcher(BenchCluster cluster, String topic, boolean committed,
      Consumer<ConsumerRecord<byte[], byte[]>> handler) throws Exception {
    Map<String, Object> props = new HashMap<>(cluster.config().clientProperties());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, committed ? "read_committed" : "read_uncommitted");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
    consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    int partitions = cluster.partitions(topic);
    List<TopicPartition> all = new java.util.ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      all.add(new TopicPartition(topic, p));
    }
    thread = new Thread(() -> {
      try {
        consumer.assign(all);
        consumer.seekToEnd(all);
        all.forEach(consumer::position);
        ready.countDown();
        while (running) {
          var records = consumer.poll(Duration.ofMillis(50));
          for (ConsumerRecord<byte[], byte[]> r : records) {
            handler.accept(r);
            seen.incrementAndGet();
          }
        }
      } catch (org.apache.kafka.common.errors.WakeupException e) {
        // closing
      } catch (Throwable t) {
        failure.set(t);
      } finally {
        ready.countDown();
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
      }
    }, "bench-watch-" + topic + (committed ? "" : "-uncommitted"));
    thread.setDaemon(true);
    thread.start();
    if (!ready.await(60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("consumer of " + topic + " did not get its positions within 60 s");
    }
    check();
  }

  long seen() {
    return seen.get();
  }

  void check() {
    Throwable t = failure.get();
    if (t != null) {
      throw new IllegalStateException("watching consumer failed: " + t, t);
    }
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    consumer.wakeup();
    thread.join(10_000);
  }
}
