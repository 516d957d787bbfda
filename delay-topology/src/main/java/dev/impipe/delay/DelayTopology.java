package dev.impipe.delay;

import dev.impipe.delay.internal.DelayProcessor;
import dev.impipe.delay.internal.Outgoing;
import dev.impipe.runtime.topics.ImTopics;
import java.util.function.Predicate;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

/**
 * The delay topology: {@code im.delayed} (bytes) -> {@link DelayProcessor} with the schedule and index stores ->
 * one sink whose topic is chosen per record (each schedule's target topic, or the rejected topic). Every output
 * goes through the app's transactional producer, so exactly-once covers delivery and the delete of the schedule.
 */
public final class DelayTopology {

  public static final String SOURCE = "delay-source";
  public static final String PROCESSOR = "delay-scheduler";
  public static final String SINK = "delay-sink";
  /** Schedule id -> due time (changelogged). */
  public static final String INDEX_STORE = "delay-index";
  /** Due bucket + id -> the record to deliver (changelogged); see {@code ScheduleCodec} for the layouts. */
  public static final String SCHEDULE_STORE = "delay-schedule";

  private DelayTopology() {}

  /**
   * Builds the topology.
   *
   * @param topicExists whether a topic exists (an Admin-backed cache in production, a fake in tests)
   */
  public static Topology build(ImTopics topics, DelayConfig config, Predicate<String> topicExists,
      DelayMetrics metrics) {
    TargetTopics targets = new TargetTopics(config, topics.names(), topicExists);
    Topology topology = new Topology();
    // Consumed as bytes: a rejected command is passed on exactly as it came.
    topology.addSource(SOURCE, Serdes.ByteArray().deserializer(), Serdes.ByteArray().deserializer(),
        topics.names().delayed());
    topology.addProcessor(PROCESSOR, () -> new DelayProcessor(topics.names().delayed(), topics.names().rejected(),
        SCHEDULE_STORE, INDEX_STORE, config, targets, metrics, topics.delayed().valueSerde().deserializer()),
        SOURCE);
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SCHEDULE_STORE),
        Serdes.Bytes(), Serdes.ByteArray()), PROCESSOR);
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(INDEX_STORE),
        Serdes.Bytes(), Serdes.ByteArray()), PROCESSOR);
    topology.addSink(SINK, Outgoing.EXTRACTOR, Serdes.ByteArray().serializer(), new Outgoing.ValueSerializer(),
        PROCESSOR);
    return topology;
  }
}
