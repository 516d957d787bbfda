package dev.impipe.runtime.streams;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.internals.DefaultKafkaClientSupplier;

/**
 * Kafka Streams' own client supplier that also remembers each stream thread's main consumer, so a processor running
 * on that thread can ask it for an input partition's lag ({@link #LAG}) or committed offset ({@link #committed}).
 * Set as {@code default.client.supplier} of the ACK wheel's, the notification decider's and the inbox store's apps;
 * the clients it creates are Kafka Streams' defaults, unchanged. A stream thread's name is its client id, and its main consumer's client id is that plus
 * {@value #CONSUMER_SUFFIX}.
 */
public class StreamThreadConsumers extends DefaultKafkaClientSupplier {

  static final String CONSUMER_SUFFIX = "-consumer";
  private static final Map<String, ThreadConsumer> BY_THREAD = new ConcurrentHashMap<>();

  /** How long a punctuation waits for the broker's end offsets before it falls back to its time rules. */
  public static final Duration END_OFFSET_TIMEOUT = Duration.ofSeconds(2);

  /**
   * {@link InputLag} from the calling stream thread's consumer; empty when the thread has no registered consumer.
   * Only called from the stream thread that owns the consumer (a processor's punctuation), as a consumer requires.
   */
  public static final InputLag LAG = (topic, partition, asOf) -> {
    ThreadConsumer thread = BY_THREAD.get(Thread.currentThread().getName());
    Consumer<byte[], byte[]> consumer = thread == null ? null : thread.consumer.get();
    return consumer == null ? Optional.empty()
        : thread.ends.ends(consumer, new TopicPartition(topic, partition), asOf);
  };

  /** A stream thread's main consumer (held weakly: a closed app's consumers are not kept alive) and its ends. */
  private record ThreadConsumer(WeakReference<Consumer<byte[], byte[]>> consumer, EndOffsets ends) {}

  /**
   * The broker's end offsets of a consumer's assigned partitions, asked once for all of them and reused by every
   * question about a time no later than the request: the wheels of all tasks of a stream thread punctuate with the
   * same wall-clock time, so a round costs one request per thread, not one per task and input.
   */
  public static final class EndOffsets {
    private final LongSupplier clock;
    /** Wall time just before the last request: every record written before it is below {@link #ends}. */
    private long fetchedAt = Long.MIN_VALUE;
    private Map<TopicPartition, Long> ends = Map.of();

    public EndOffsets(LongSupplier clock) {
      this.clock = clock;
    }

    /**
     * The broker's end offset of {@code tp} (read_committed: the last stable offset) as of {@code asOf} or later,
     * and the consumer's position. Never the consumer's cached lag: that is the lag of the partition's last fetch
     * response handed out, and under load a response waits in the consumer's buffer behind other partitions' for
     * many seconds while the broker holds newer records (the push benchmark: ACKs at the broker 13 s before their
     * deadline, the cached lag 0, the wheel firing).
     */
    public Optional<InputLag.Ends> ends(Consumer<?, ?> consumer, TopicPartition tp, long asOf) {
      try {
        Long end = fetchedAt >= asOf ? ends.get(tp) : null;
        if (end == null) {
          long before = clock.getAsLong();
          Set<TopicPartition> assigned = new HashSet<>(consumer.assignment());
          assigned.add(tp);
          ends = consumer.endOffsets(assigned, END_OFFSET_TIMEOUT);
          fetchedAt = before;
          end = ends.get(tp);
          if (end == null) {
            return Optional.empty();
          }
        }
        return Optional.of(new InputLag.Ends(end, consumer.position(tp, Duration.ZERO)));
      } catch (RuntimeException e) {
        // Not assigned (any more), position not known yet, broker not answering in time: the time rules apply.
        return Optional.empty();
      }
    }
  }

  /**
   * The committed offset of {@code tp} (the offset the task's input resumes from; empty: none committed yet), asked
   * of the calling stream thread's consumer. Only from the stream thread that owns the consumer (a processor's
   * {@code init} or punctuation).
   *
   * @throws IllegalStateException when the calling thread has no registered consumer (this class is not the app's
   *     client supplier)
   */
  public static Optional<Long> committed(TopicPartition tp, Duration timeout) {
    ThreadConsumer thread = BY_THREAD.get(Thread.currentThread().getName());
    Consumer<byte[], byte[]> consumer = thread == null ? null : thread.consumer.get();
    if (consumer == null) {
      throw new IllegalStateException("no stream-thread consumer registered for thread "
          + Thread.currentThread().getName() + " (default.client.supplier is not StreamThreadConsumers)");
    }
    OffsetAndMetadata committed = consumer.committed(Set.of(tp), timeout).get(tp);
    return committed == null ? Optional.empty() : Optional.of(committed.offset());
  }

  /** Whether the stream thread called {@code threadName} has its main consumer registered here. */
  public static boolean knows(String threadName) {
    ThreadConsumer thread = BY_THREAD.get(threadName);
    return thread != null && thread.consumer.get() != null;
  }

  @Override
  public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
    Consumer<byte[], byte[]> consumer = super.getConsumer(config);
    Object clientId = config.get(ConsumerConfig.CLIENT_ID_CONFIG);
    if (clientId instanceof String id && id.endsWith(CONSUMER_SUFFIX)) {
      BY_THREAD.values().removeIf(t -> t.consumer.get() == null);
      BY_THREAD.put(id.substring(0, id.length() - CONSUMER_SUFFIX.length()),
          new ThreadConsumer(new WeakReference<>(consumer), new EndOffsets(System::currentTimeMillis)));
    }
    return consumer;
  }
}
