package dev.impipe.ack;

import dev.impipe.ack.wheel.AckWheelMetrics;
import dev.impipe.ack.wheel.AckWheelTopology;
import dev.impipe.runtime.streams.StreamThreadConsumers;
import dev.impipe.runtime.app.ComponentContext;
import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.runtime.config.ConfigTable;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsConfig;

/** Runs the ACK-timeout wheel as the Streams app {@code <prefix>ack-timeout}. */
public final class AckTimeoutComponent implements PipelineComponent {

  public static final String NAME = "ack-timeout";
  /** The record cache of the app (all its stream threads together) when {@code IM_ACK_STORE_CACHE} is on. */
  public static final long STORE_CACHE_BYTES = 64L << 20;
  /** How much one fetch returns of one input partition (Kafka's default: 1 MiB). */
  static final int MAX_PARTITION_FETCH_BYTES = 16 << 10;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int order() {
    return 300;
  }

  @Override
  public List<ConfigTable> configTables() {
    return List.of(AckTimeoutConfig.TABLE);
  }

  @Override
  public void start(ComponentContext context) {
    AckTimeoutConfig config = AckTimeoutConfig.fromEnv(context.env());
    context.startStreams(NAME,
        AckWheelTopology.build(context.topics(), config, new AckWheelMetrics(context.metrics())), overrides(config));
  }

  /** Streams settings of the wheel app on top of the pipeline defaults. */
  public static Map<String, Object> overrides(AckTimeoutConfig config) {
    Map<String, Object> overrides = new HashMap<>(common(config));
    if (config.storeCache()) {
      // Kafka Streams' default (10 MB for the app) holds a fraction of the devices a busy wheel touches between a
      // push and its ACK (`bench ackwheel --rate max`, ADR 0019).
      overrides.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, STORE_CACHE_BYTES);
    }
    return Map.copyOf(overrides);
  }

  private static Map<String, Object> common(AckTimeoutConfig config) {
    return Map.of(StreamsConfig.NUM_STREAM_THREADS_CONFIG, config.streamThreads(),
        // Wall-clock punctuations run between polls: a short poll keeps timeouts within a tick of due.
        StreamsConfig.POLL_MS_CONFIG, pollMs(config),
        // A slot-boundary round asks the broker for the inputs' end offsets on the main consumer's connection, where
        // the request waits behind the consumer's fetch in flight: with the default fetch.max.wait.ms (500 ms) an idle
        // input made every round wait up to half a second, the stream thread with it (timeouts a tick late).
        StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), (int) pollMs(config),
        // Records fetched for one partition are handed over only after those fetched before them for the others: with
        // Kafka's 1 MiB per partition (tens of thousands of deliveries or ACKs) and 48 inputs behind, an input's records
        // waited 60 s and more (`bench push`, im_ack_input_wait_seconds), the grace after which the marks take a
        // waiting input for a stuck one and fire the slots its ACKs wait for. Waits of 15 s or more in one run at
        // 64 KiB (46) and in one of two at 32 KiB (47); none in two runs at 16 KiB, which costs the wheel's thread a
        // third more CPU per record at its full speed (`bench ackwheel --rate max`), a few hundredths of a core here.
        StreamsConfig.mainConsumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG), MAX_PARTITION_FETCH_BYTES,
        // A task reads its two inputs as they come, not interleaved by record time: the end-offset marks already hold
        // a due slot back until both are processed past it (InputMarks). With Kafka's default (0) a task whose other
        // input has nothing buffered waits for the next fetch, and Kafka Streams formats a log text (String.format)
        // for that check on every record it processes.
        StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, StreamsConfig.MAX_TASK_IDLE_MS_DISABLED,
        // Lets the wheel ask its thread's consumer whether an input is read to its end (quiet) or lagging.
        StreamsConfig.DEFAULT_CLIENT_SUPPLIER_CONFIG, StreamThreadConsumers.class.getName());
  }

  static long pollMs(AckTimeoutConfig config) {
    return Math.max(5, Math.min(100, config.tick().toMillis() / 20));
  }
}
