package dev.impipe.schemas.serde;

import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;

/** Test data builders and a hand-rolled Confluent wire-format writer (independent of the serializer). */
final class TestRecords {

  static final Instant SENT_AT = Instant.parse("2024-05-01T12:00:00.123Z");

  private TestRecords() {}

  static ChatMessage directMessage() {
    return ChatMessage.newBuilder()
        .setMessageId("m-1")
        .setClientMsgId("c-1")
        .setConversationId("d:alice:bob")
        .setConversationType(ConversationType.DIRECT)
        .setType(MessageType.MESSAGE)
        .setSenderId("alice")
        .setSenderDeviceId("phone")
        .setRecipientId("bob")
        .setBody("hello, bob \u00e9\u4e2d")
        .setSentAt(SENT_AT)
        .setAttributes(Map.of("lang", "en"))
        .build();
  }

  static InboxEntry inboxEntry() {
    return InboxEntry.newBuilder()
        .setUserId("bob")
        .setType(InboxEntryType.READ)
        .setConversationId("d:alice:bob")
        .setConversationSeq(41L)
        .setReadUpToSeq(40L)
        .setTimestamp(SENT_AT)
        .build();
  }

  static ScheduleCommand scheduleCommand() {
    return ScheduleCommand.newBuilder()
        .setId("s-1")
        .setOp(ScheduleOp.SCHEDULE)
        .setDeliverAt(SENT_AT.plusSeconds(60))
        .setTargetTopic("im.messages")
        .setKey(ByteBuffer.wrap("k".getBytes(StandardCharsets.UTF_8)))
        .setValue(ByteBuffer.wrap(new byte[] {0, 1, 2, (byte) 0xFF}))
        .setHeaders(Map.of("trace", ByteBuffer.wrap(new byte[] {9, 8})))
        .build();
  }

  static AckTimeout ackTimeout() {
    return AckTimeout.newBuilder()
        .setUserId("bob")
        .setDeviceId("tablet")
        .setSeqs(List.of(3L, 4L, 7L))
        .setFirstPushedAt(SENT_AT)
        .setDeadline(SENT_AT.plusSeconds(30))
        .setAttempts(2)
        .build();
  }

  static MembershipChange join() {
    return MembershipChange.newBuilder()
        .setGroupId("g-1").setUserId("carol").setOp(MembershipOp.JOIN).setAt(SENT_AT).build();
  }

  /** Magic byte 0, big-endian id, then {@code datum} written by Avro's generic writer with {@code schema}. */
  static byte[] wireFormat(int schemaId, Schema schema, Object datum) {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      out.write(0);
      out.write(ByteBuffer.allocate(4).putInt(schemaId).array());
      BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
      new GenericDatumWriter<Object>(schema).write(datum, encoder);
      encoder.flush();
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
