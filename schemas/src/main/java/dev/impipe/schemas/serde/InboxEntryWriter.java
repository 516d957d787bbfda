package dev.impipe.schemas.serde;

import dev.impipe.avro.InboxEntry;
import java.io.IOException;
import org.apache.avro.Schema;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.Encoder;

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

  @Override
  public void write(InboxEntry e, Encoder out) throws IOException {
    out.writeString(required(e.getUserId(), "userId"));
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
    Boolean readDiffusion = e.getReadDiffusion();
    if (readDiffusion == null) {
      out.writeIndex(0);
      out.writeNull();
    } else {
      out.writeIndex(1);
      out.writeBoolean(readDiffusion);
    }
    nullable(out, e.getClientMsgId());
    nullable(out, e.getReason());
    nullable(out, e.getReasonCode());
    nullable(out, e.getRejectedOp());
    nullable(out, e.getTargetUserId());
    nullable(out, e.getRecalledBy());
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
