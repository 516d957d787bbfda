package dev.impipe.schemas.serde;

import dev.impipe.avro.InboxEntry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.Encoder;
import org.apache.avro.io.EncoderFactory;

/**
 * Writes an {@link InboxEntry} field by field, exactly as Avro's {@code SpecificDatumWriter} does (same bytes;
 * {@code InboxEntryWriterTest} compares the two on every combination of set and unset fields and pins the schema's
 * field list, so a schema change cannot go unnoticed here).
 *
 * <p>Why: the fan-out writes several inbox entries per message and the generic writer looked up, resolved and
 * converted each of the 18 fields by schema (a union resolution per nullable field): about 15% of the fan-out stream
 * thread in a profile of {@code bin/im bench fanout}. Avro generates such direct coders itself ("custom coders")
 * only for schemas without logical types, and this one has a {@code timestamp-millis}.
 */
final class InboxEntryWriter implements DatumWriter<InboxEntry> {

  @Override
  public void setSchema(Schema schema) {
    if (schema != InboxEntry.getClassSchema()) {
      throw new IllegalArgumentException("InboxEntryWriter writes only " + InboxEntry.getClassSchema().getFullName()
          + "'s own schema");
    }
  }

  /**
   * The encoding of everything after {@code userId} of the last entry written, with the field values it was made
   * from. The fan-out writes one entry per recipient of a message and those entries differ only in their first field,
   * so the rest is encoded once per message and copied for each recipient. Immutable, so the writer can be shared by
   * stream threads (a race costs one encoding, never a wrong byte).
   */
  private volatile Tail last;

  @Override
  public void write(InboxEntry e, Encoder out) throws IOException {
    out.writeString(required(e.getUserId(), "userId"));
    Tail tail = last;
    if (tail == null || !tail.encodes(e)) {
      tail = new Tail(e);
      last = tail;
    }
    out.writeFixed(tail.bytes);
  }

  /** The fields after {@code userId}, in schema order. */
  private static void writeTail(InboxEntry e, Encoder out) throws IOException {
    out.writeEnum(required(e.getType(), "type").ordinal());
    out.writeString(required(e.getConversationId(), "conversationId"));
    out.writeLong(e.getConversationSeq());
    nullable(out, e.getMessageId());
    nullable(out, e.getSenderId());
    nullable(out, e.getBody());
    nullable(out, e.getRefMessageId());
    nullable(out, e.getReadUpToSeq());
    out.writeLong(required(e.getTimestamp(), "timestamp").toEpochMilli());
    nullable(out, e.getTimelineFromSeq());
    nullable(out, e.getReadDiffusion());
    nullable(out, e.getClientMsgId());
    nullable(out, e.getReason());
    nullable(out, e.getReasonCode());
    nullable(out, e.getRejectedOp());
    nullable(out, e.getTargetUserId());
    nullable(out, e.getRecalledBy());
    nullable(out, e.getMuted());
    nullable(out, e.getPinned());
  }

  /**
   * An encoded tail and the values it encodes. A later entry with the very same value objects (compared by
   * reference: every field type is immutable, so the same object is the same value) has the same tail.
   */
  private static final class Tail {
    private final Object[] values;
    private final long conversationSeq;
    private final byte[] bytes;

    Tail(InboxEntry e) throws IOException {
      this.values = values(e);
      this.conversationSeq = e.getConversationSeq();
      ByteArrayOutputStream buffer = new ByteArrayOutputStream(128);
      BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(buffer, null);
      writeTail(e, encoder);
      encoder.flush();
      this.bytes = buffer.toByteArray();
    }

    boolean encodes(InboxEntry e) {
      if (e.getConversationSeq() != conversationSeq) {
        return false;
      }
      Object[] v = values;
      return v[0] == e.getType() && v[1] == e.getConversationId() && v[2] == e.getMessageId()
          && v[3] == e.getSenderId() && v[4] == e.getBody() && v[5] == e.getRefMessageId()
          && v[6] == e.getReadUpToSeq() && v[7] == e.getTimestamp() && v[8] == e.getTimelineFromSeq()
          && v[9] == e.getReadDiffusion() && v[10] == e.getClientMsgId() && v[11] == e.getReason()
          && v[12] == e.getReasonCode() && v[13] == e.getRejectedOp() && v[14] == e.getTargetUserId()
          && v[15] == e.getRecalledBy() && v[16] == e.getMuted() && v[17] == e.getPinned();
    }

    private static Object[] values(InboxEntry e) {
      return new Object[] {e.getType(), e.getConversationId(), e.getMessageId(), e.getSenderId(), e.getBody(),
          e.getRefMessageId(), e.getReadUpToSeq(), e.getTimestamp(), e.getTimelineFromSeq(), e.getReadDiffusion(),
          e.getClientMsgId(), e.getReason(), e.getReasonCode(), e.getRejectedOp(), e.getTargetUserId(),
          e.getRecalledBy(), e.getMuted(), e.getPinned()};
    }
  }

  private static <V> V required(V value, String field) {
    if (value == null) {
      throw new NullPointerException("null value for (non-nullable) InboxEntry." + field);
    }
    return value;
  }

  /** A {@code ["null", "string"]} union. */
  private static void nullable(Encoder out, String value) throws IOException {
    if (value == null) {
      out.writeIndex(0);
      out.writeNull();
    } else {
      out.writeIndex(1);
      out.writeString(value);
    }
  }

  /** A {@code ["null", "boolean"]} union. */
  private static void nullable(Encoder out, Boolean value) throws IOException {
    if (value == null) {
      out.writeIndex(0);
      out.writeNull();
    } else {
      out.writeIndex(1);
      out.writeBoolean(value);
    }
  }

  /** A {@code ["null", "long"]} union. */
  private static void nullable(Encoder out, Long value) throws IOException {
    if (value == null) {
      out.writeIndex(0);
      out.writeNull();
    } else {
      out.writeIndex(1);
      out.writeLong(value);
    }
  }
}
