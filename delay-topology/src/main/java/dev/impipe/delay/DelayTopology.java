package dev.impipe.delay;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.delay.internal.CancelRefusals;
import dev.impipe.delay.internal.DelayProcessor;
import dev.impipe.delay.internal.Outgoing;
import dev.impipe.delay.internal.ScheduleRules;
import dev.impipe.delay.internal.SweepBudget;
import dev.impipe.runtime.streams.KeptOffsetsWindowStore;
import dev.impipe.runtime.streams.MemtableBudget;
import dev.impipe.runtime.topics.ImTopics;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.RocksDbWindowBytesStoreSupplier;

/**
 * The delay topology: {@code im.delayed} (bytes) -> {@link DelayProcessor} with the schedule and index stores ->
 * one sink whose topic is chosen per record (each schedule's target topic, the rejected topic, or the inbox for a
 * refused cancel's REJECTED entry). Every output goes through the app's transactional producer, so exactly-once
 * covers delivery and the delete of the schedule. A bad command is rejected with a {@code RejectedRecord}: the
 * processing exception handler writes it, as it came, to the rejected topic (same transaction).
 */
public final class DelayTopology {

  public static final String SOURCE = "delay-source";
  public static final String PROCESSOR = "delay-scheduler";
  public static final String SINK = "delay-sink";
  /**
   * Schedule id -> [version] due time, segmented by due time like {@link #SCHEDULE_STORE} (changelogged). An entry whose
   * schedule has been delivered stays until its segment is dropped; the sweep position says it is gone.
   */
  public static final String INDEX_STORE = "delay-index-segments";
  /**
   * Due time + id -> the record to deliver, in time segments by due time (a window store, changelogged with
   * time retention): a delivered record costs its output and nothing else; its segment is dropped whole once the
   * sweep has passed it. See {@code ScheduleCodec} for the layouts.
   */
  public static final String SCHEDULE_STORE = "delay-schedule-segments";
  /**
   * The segmented stores' retention as Kafka Streams sees it: far beyond any due time, so only the sweep's
   * position record (filed at its segment + this) expires segments. The changelog's own retention is
   * {@link DelayConfig#changelogRetentionMs()}.
   */
  public static final long STORE_RETENTION_MS = ScheduleRules.STORE_RETENTION_MS;

  private DelayTopology() {}

  /**
   * A refused CANCEL gives its requester a REJECTED entry in their inbox (a 202 never hides a silent drop).
   * The conversation is the schedule's target key (the conversation id, for chat messages scheduled through
   * {@link ScheduledMessages}). This is the one record the app writes outside the schedules' own targets, so its
   * Kafka principal needs WRITE on the inbox topic.
   */
  static CancelRefusals inboxNotices(ImTopics topics) {
    String inbox = topics.inbox().name();
    Serializer<InboxEntry> serializer = topics.inbox().valueSerde().serializer();
    return (requester, scheduleId, schedule, reason, timestamp) -> {
      String conversation = schedule.key() == null ? scheduleId : new String(schedule.key(), StandardCharsets.UTF_8);
      InboxEntry entry = InboxEntry.newBuilder()
          .setUserId(requester)
          .setType(InboxEntryType.REJECTED)
          .setConversationId(conversation)
          .setConversationSeq(-1L)
          .setMessageId(scheduleId)
          .setSenderId(requester)
          .setTimestamp(Instant.ofEpochMilli(timestamp))
          .setReason(reason)
          .setReasonCode("NOT_SENDER")
          .setRejectedOp("CANCEL")
          .build();
      return new Record<>(requester.getBytes(StandardCharsets.UTF_8),
          new Outgoing(inbox, serializer.serialize(inbox, entry)), timestamp);
    };
  }

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
    CancelRefusals refusals = inboxNotices(topics);
    // One budget per stream thread, shared by its tasks (they punctuate in one transaction).
    ThreadLocal<SweepBudget> budgets = ThreadLocal.withInitial(
        () -> new SweepBudget(config.batch(), config.sweepTimeMs(), config.drainTickMs(), System::nanoTime));
    Map<String, String> changelog = Map.of(TopicConfig.RETENTION_MS_CONFIG,
        Long.toString(config.changelogRetentionMs()));
    Set<StoreBuilder<?>> stores = new LinkedHashSet<>();
    for (String name : List.of(SCHEDULE_STORE, INDEX_STORE)) {
      stores.add(Stores.windowStoreBuilder(MemtableBudget.window(
          KeptOffsetsWindowStore.supplier(segmented(name, config.segmentMs()))),
          Serdes.Bytes(), Serdes.ByteArray()).withLoggingEnabled(changelog));
    }
    // The supplier attaches the stores: the processor knows them by the names it is given, not by our constants.
    topology.addProcessor(PROCESSOR, new ProcessorSupplier<byte[], byte[], byte[], Outgoing>() {
      @Override
      public Processor<byte[], byte[], byte[], Outgoing> get() {
        return new DelayProcessor(topics.names().delayed(), topics.names().rejected(),
            new DelayProcessor.StoreNames(SCHEDULE_STORE, INDEX_STORE), config, targets, metrics,
            topics.delayed().valueSerde().deserializer(), refusals, budgets::get);
      }

      @Override
      public Set<StoreBuilder<?>> stores() {
        return stores;
      }
    }, SOURCE);
    topology.addSink(SINK, Outgoing.EXTRACTOR, Serdes.ByteArray().serializer(), new Outgoing.ValueSerializer(),
        PROCESSOR);
    return topology;
  }

  /**
   * A RocksDB window store with the given segment span. The public factory ties the segment to half the
   * retention; Kafka Streams' own supplier takes it as a parameter (an internal class, stable since 2.x).
   */
  static WindowBytesStoreSupplier segmented(String name, long segmentMs) {
    return new RocksDbWindowBytesStoreSupplier(name, STORE_RETENTION_MS, segmentMs, 1, false,
        RocksDbWindowBytesStoreSupplier.WindowStoreTypes.DEFAULT_WINDOW_STORE);
  }
}
