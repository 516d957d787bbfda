package dev.impipe.runtime.topics;

import dev.impipe.avro.Ack;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.Delivery;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.Notification;
import dev.impipe.avro.PushRegistration;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.schemas.registry.SchemaRegistryClient;
import dev.impipe.schemas.serde.SpecificAvroSerde;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/** The typed topics of the pipeline: String keys, Avro values in the Confluent wire format. */
public final class ImTopics {

  private final TopicNames names;
  private final SchemaRegistryClient registry;
  private final Map<String, Class<? extends SpecificRecord>> valueTypes = new LinkedHashMap<>();

  public ImTopics(TopicNames names, SchemaRegistryClient registry) {
    this.names = names;
    this.registry = registry;
    valueTypes.put(names.messages(), ChatMessage.class);
    valueTypes.put(names.groupMembers(), MembershipChange.class);
    valueTypes.put(names.inbox(), InboxEntry.class);
    valueTypes.put(names.deviceCursors(), DeviceCursor.class);
    valueTypes.put(names.deliveries(), Delivery.class);
    valueTypes.put(names.acks(), Ack.class);
    valueTypes.put(names.ackTimeouts(), AckTimeout.class);
    valueTypes.put(names.delayed(), ScheduleCommand.class);
    valueTypes.put(names.history(), ChatMessage.class);
    valueTypes.put(names.pushRegistrations(), PushRegistration.class);
    valueTypes.put(names.notifications(), Notification.class);
  }

  public TopicNames names() {
    return names;
  }

  public SchemaRegistryClient registry() {
    return registry;
  }

  public Topic<String, ChatMessage> messages() {
    return topic(names.messages(), ChatMessage.class);
  }

  public Topic<String, MembershipChange> groupMembers() {
    return topic(names.groupMembers(), MembershipChange.class);
  }

  public Topic<String, InboxEntry> inbox() {
    return topic(names.inbox(), InboxEntry.class);
  }

  public Topic<String, DeviceCursor> deviceCursors() {
    return topic(names.deviceCursors(), DeviceCursor.class);
  }

  public Topic<String, Delivery> deliveries() {
    return topic(names.deliveries(), Delivery.class);
  }

  public Topic<String, Ack> acks() {
    return topic(names.acks(), Ack.class);
  }

  public Topic<String, AckTimeout> ackTimeouts() {
    return topic(names.ackTimeouts(), AckTimeout.class);
  }

  public Topic<String, ScheduleCommand> delayed() {
    return topic(names.delayed(), ScheduleCommand.class);
  }

  /**
   * Conversation history as the fan-out accepted it: key {@code HistoryKey} ({@code conversationId|seq}),
   * partitioned by the conversation id like {@code im.messages}; a null value = nothing to show at that seq.
   */
  public Topic<String, ChatMessage> history() {
    return topic(names.history(), ChatMessage.class);
  }

  public Topic<String, PushRegistration> pushRegistrations() {
    return topic(names.pushRegistrations(), PushRegistration.class);
  }

  public Topic<String, Notification> notifications() {
    return topic(names.notifications(), Notification.class);
  }

  /** Rejected records keep their original bytes; the reason travels in headers. */
  public Topic<byte[], byte[]> rejected() {
    return new Topic<>(names.rejected(), Serdes.ByteArray(), Serdes.ByteArray());
  }

  /** The Avro value type of an Avro-valued topic, if {@code topic} is one. */
  public Optional<Class<? extends SpecificRecord>> valueType(String topic) {
    return Optional.ofNullable(valueTypes.get(topic));
  }

  /** Every Avro-valued topic name. */
  public java.util.Set<String> avroTopics() {
    return java.util.Collections.unmodifiableSet(valueTypes.keySet());
  }

  /** A fresh serde for the value type of {@code topic}. */
  public <V extends SpecificRecord> Serde<V> valueSerde(Class<V> type) {
    return new SpecificAvroSerde<>(type, registry, false);
  }

  private <V extends SpecificRecord> Topic<String, V> topic(String name, Class<V> type) {
    return new Topic<>(name, Serdes.String(), valueSerde(type));
  }
}
