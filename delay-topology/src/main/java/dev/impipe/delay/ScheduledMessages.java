package dev.impipe.delay;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.runtime.topics.ImTopics;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Builds the commands that schedule a chat message for later delivery to {@code im.messages} and cancel it, for
 * producers such as ingest. The schedule id is the message id; publish with {@link #record} (key = schedule id)
 * using the {@code im.delayed} topic's serdes ({@link ImTopics#delayed()}).
 */
public final class ScheduledMessages {

  private final String messagesTopic;
  private final String delayedTopic;
  private final Serializer<ChatMessage> messageSerializer;

  public ScheduledMessages(ImTopics topics) {
    this.messagesTopic = topics.names().messages();
    this.delayedTopic = topics.names().delayed();
    this.messageSerializer = topics.messages().valueSerde().serializer();
  }

  /**
   * A SCHEDULE delivering {@code message} to {@code im.messages} at {@code deliverAt}, keyed by its conversation id
   * (so it lands in the conversation's partition), its value serialized with the topic's serde.
   */
  public ScheduleCommand schedule(ChatMessage message, Instant deliverAt) {
    byte[] value = messageSerializer.serialize(messagesTopic, message);
    return ScheduleCommand.newBuilder()
        .setId(message.getMessageId())
        .setOp(ScheduleOp.SCHEDULE)
        .setDeliverAt(deliverAt)
        .setTargetTopic(messagesTopic)
        .setKey(ByteBuffer.wrap(message.getConversationId().getBytes(StandardCharsets.UTF_8)))
        .setValue(ByteBuffer.wrap(value))
        // Who may cancel it: only this user (see DelayHeaders.REQUESTER).
        .setHeaders(Map.of(DelayHeaders.SENDER, utf8(message.getSenderId())))
        .build();
  }

  /** An operator's CANCEL of the scheduled message {@code messageId}, honoured whoever scheduled it. */
  public ScheduleCommand cancel(String messageId, Instant requestedAt) {
    return cancel(null, messageId, requestedAt);
  }

  /**
   * A CANCEL of the scheduled message {@code messageId} asked for by {@code requester} (null: an operator). The
   * delay topology honours it only when the requester scheduled the message; otherwise the CANCEL goes to the
   * rejected topic and the requester gets a REJECTED inbox entry. {@code requestedAt} only documents when it was
   * asked.
   */
  public ScheduleCommand cancel(String requester, String messageId, Instant requestedAt) {
    return ScheduleCommand.newBuilder()
        .setId(messageId)
        .setOp(ScheduleOp.CANCEL)
        .setDeliverAt(requestedAt)
        .setHeaders(requester == null ? Map.of() : Map.of(DelayHeaders.REQUESTER, utf8(requester)))
        .build();
  }

  private static ByteBuffer utf8(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  /** The record to publish: topic {@code im.delayed}, key = schedule id. */
  public ProducerRecord<String, ScheduleCommand> record(ScheduleCommand command) {
    return new ProducerRecord<>(delayedTopic, command.getId(), command);
  }
}
