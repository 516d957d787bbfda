package dev.impipe.delay;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.delay.internal.CancelRefusals;
import dev.impipe.delay.internal.DelayProcessor;
import dev.impipe.delay.internal.Outgoing;
import dev.impipe.runtime.topics.ImTopics;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.function.Predicate;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;

/**
 * The delay topology: {@code im.delayed} (bytes) -> {@link DelayProcessor} with the schedule and index stores ->
 * one sink whose topic is chosen per record (each schedule's target topic, the rejected topic, or the inbox for a
 * refused cancel's REJECTED entry). Every output goes through the app's transactional producer, so exactly-once
 * covers delivery and the delete of the schedule.
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
   * A refused CANCEL gives its requester a REJECTED entry in their inbox (DESIGN: a 202 never hides a silent drop).
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
    topology.addProcessor(PROCESSOR, () -> new DelayProcessor(topics.names().delayed(), topics.names().rejected(),
        SCHEDULE_STORE, INDEX_STORE, config, targets, metrics, topics.delayed().valueSerde().deserializer(),
        refusals), SOURCE);
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SCHEDULE_STORE),
        Serdes.Bytes(), Serdes.ByteArray()), PROCESSOR);
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(INDEX_STORE),
        Serdes.Bytes(), Serdes.ByteArray()), PROCESSOR);
    topology.addSink(SINK, Outgoing.EXTRACTOR, Serdes.ByteArray().serializer(), new Outgoing.ValueSerializer(),
        PROCESSOR);
    return topology;
  }
}
