package dev.impipe.ack.wheel;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.internals.DefaultKafkaClientSupplier;

/**
 * Kafka Streams' own client supplier that also remembers each stream thread's main consumer, so a processor running
 * on that thread can ask it for an input partition's lag ({@link #LAG}). Set as {@code default.client.supplier} of
 * the wheel app; the clients it creates are Kafka Streams' defaults, unchanged. A stream thread's name is its client
 * id, and its main consumer's client id is that plus {@value #CONSUMER_SUFFIX}. Consumers are held weakly, so a
 * closed app's consumers are not kept alive by this map.
 */
public class StreamThreadConsumers extends DefaultKafkaClientSupplier {

  static final String CONSUMER_SUFFIX = "-consumer";
  private static final Map<String, WeakReference<Consumer<byte[], byte[]>>> BY_THREAD = new ConcurrentHashMap<>();

  /**
   * {@link InputLag} from the calling stream thread's consumer ({@code Consumer#currentLag} and {@code position}: no
   * request to the broker); empty when the thread has no registered consumer or the consumer cannot tell. Only
   * called from the stream thread that owns the consumer (a processor's punctuation), as a consumer requires.
   */
  public static final InputLag LAG = (topic, partition, lastProcessedOffset) -> {
    WeakReference<Consumer<byte[], byte[]>> ref = BY_THREAD.get(Thread.currentThread().getName());
    Consumer<byte[], byte[]> consumer = ref == null ? null : ref.get();
    if (consumer == null) {
      return OptionalLong.empty();
    }
    TopicPartition tp = new TopicPartition(topic, partition);
    try {
      OptionalLong lag = consumer.currentLag(tp);
      if (lag.isEmpty() || lag.getAsLong() > 0) {
        return lag;
      }
      if (lastProcessedOffset < 0) {
        return OptionalLong.empty();
      }
      // At the end: processed all only if nothing fetched lies between the last processed record and the position.
      return consumer.position(tp, Duration.ZERO) == lastProcessedOffset + 1 ? OptionalLong.of(0)
          : OptionalLong.empty();
    } catch (RuntimeException e) {
      // Not assigned (any more), position not known yet, or otherwise unknown: the wheel's time rules apply.
      return OptionalLong.empty();
    }
  };

  /** Whether the stream thread called {@code threadName} has its main consumer registered here. */
  public static boolean knows(String threadName) {
    WeakReference<Consumer<byte[], byte[]>> ref = BY_THREAD.get(threadName);
    return ref != null && ref.get() != null;
  }

  @Override
  public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
    Consumer<byte[], byte[]> consumer = super.getConsumer(config);
    Object clientId = config.get(ConsumerConfig.CLIENT_ID_CONFIG);
    if (clientId instanceof String id && id.endsWith(CONSUMER_SUFFIX)) {
      BY_THREAD.values().removeIf(r -> r.get() == null);
      BY_THREAD.put(id.substring(0, id.length() - CONSUMER_SUFFIX.length()), new WeakReference<>(consumer));
    }
    return consumer;
  }
}
