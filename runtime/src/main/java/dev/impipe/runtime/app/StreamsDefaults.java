package dev.impipe.runtime.app;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.ApplicationIds;
import dev.impipe.runtime.topics.TopicNames;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;

/**
 * The Streams settings every app of the pipeline runs with; tests (TopologyTestDriver) use the same ones so the
 * error handling they see is production's.
 */
public final class StreamsDefaults {

  private StreamsDefaults() {}

  /**
   * Exactly-once v2, and one bad record never stops a topology: a record that does not deserialize, or that a
   * processor rejects ({@link dev.impipe.runtime.streams.RejectedRecord}), goes to the rejected topic with reason
   * headers. Any other exception in a processor fails the stream thread ({@link DeadLetterProcessingExceptionHandler}).
   */
  public static Properties properties(ImConfig config, TopicNames names, String appName) {
    Properties props = new Properties();
    // At inbox generation g >= 1 the user-keyed apps get their own id (fresh offsets and changelogs, ADR 0014).
    props.put(StreamsConfig.APPLICATION_ID_CONFIG,
        ApplicationIds.applicationId(config.topicPrefix(), appName, names.generation()));
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    props.put(StreamsConfig.STATE_DIR_CONFIG, config.stateDir().toString());
    props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, (int) config.replicationFactor());
    if (config.replicationFactor() >= 3) {
      // Changelogs and repartition topics as durable as the pipeline's own topics (TopicProvisioner).
      props.put(StreamsConfig.topicPrefix("min.insync.replicas"), "2");
    }
    props.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, names.rejected());
    props.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueExceptionHandler.class);
    props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterProcessingExceptionHandler.class);
    props.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterProductionExceptionHandler.class);
    // A transaction's first write to a partition whose previous transaction's markers are still being written is
    // answered CONCURRENT_TRANSACTIONS and retried after retry.backoff.ms (default 100 ms, doubling to 1 s). With
    // transactions v2 that is every produce request of back-to-back transactions: at the default, each 100 ms
    // commit interval waited 100+ ms for it (measured in the push benchmark). The markers take a few ms.
    props.put(StreamsConfig.producerPrefix(ProducerConfig.RETRY_BACKOFF_MS_CONFIG), 5);
    // Off-heap memory of all stores bounded by one setting (IM_ROCKSDB_MEMORY, see SharedRocksDBMemory).
    props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, SharedRocksDBMemory.class);
    return props;
  }
}
