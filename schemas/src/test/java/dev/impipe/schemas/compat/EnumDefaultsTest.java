package dev.impipe.schemas.compat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Enums that may grow carry a {@code default} symbol, so a reader built from today's schema survives a symbol a
 * newer producer adds: it reads it as {@code UNKNOWN} instead of failing on the record.
 */
class EnumDefaultsTest {

  @ParameterizedTest
  @ValueSource(strings = {"InboxEntry.type", "MembershipChange.op", "ChatMessage.type", "ScheduleCommand.op"})
  void growableEnumsHaveTheUnknownDefault(String recordField) throws IOException {
    String[] parts = recordField.split("\\.");
    Schema schema = new Schema.Parser().parse(new java.io.File("src/main/avro/" + parts[0] + ".avsc"));
    Schema e = schema.getField(parts[1]).schema();

    assertThat(e.getEnumDefault()).isEqualTo("UNKNOWN");
    assertThat(e.getEnumSymbols()).contains("UNKNOWN");
  }

  @Test
  void aReaderOfTodayReadsAnInboxEntryTypeFromTheFutureAsUnknown() throws IOException {
    // Given a newer producer whose InboxEntryType has one more symbol
    Schema future = withExtraSymbol(InboxEntry.getClassSchema(), "type", "CONVERSATION_RENAMED");
    GenericRecord written = new GenericData.Record(future);
    written.put("userId", "alice");
    written.put("type", new GenericData.EnumSymbol(future.getField("type").schema(), "CONVERSATION_RENAMED"));
    written.put("conversationId", "g1");
    written.put("conversationSeq", 7L);
    written.put("timestamp", 1L);

    // Then the offline checker accepts today's schema as its reader (the gate's direction)
    assertThat(SchemaCompatibility.checkReaderWriterCompatibility(InboxEntry.getClassSchema(), future).getType())
        .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    // And today's generated class reads the record, the unknown symbol as UNKNOWN
    InboxEntry read = read(InboxEntry.getClassSchema(), future, written);
    assertThat(read.getType()).isEqualTo(InboxEntryType.UNKNOWN);
    assertThat(read.getConversationSeq()).isEqualTo(7L);
  }

  @Test
  void aMembershipOpFromTheFutureIsReadAsUnknown() throws IOException {
    Schema future = withExtraSymbol(MembershipChange.getClassSchema(), "op", "BAN");
    GenericRecord written = new GenericData.Record(future);
    written.put("groupId", "g1");
    written.put("userId", "mallory");
    written.put("op", new GenericData.EnumSymbol(future.getField("op").schema(), "BAN"));
    written.put("at", 1L);

    MembershipChange read = read(MembershipChange.getClassSchema(), future, written);

    assertThat(read.getOp()).isEqualTo(MembershipOp.UNKNOWN);
    assertThat(read.getActorId()).isNull();
  }

  private static Schema withExtraSymbol(Schema record, String field, String symbol) {
    Schema current = record.getField(field).schema();
    List<String> symbols = new ArrayList<>(current.getEnumSymbols());
    symbols.add(symbol);
    Schema grown = Schema.createEnum(current.getName(), current.getDoc(), current.getNamespace(), symbols,
        current.getEnumDefault());
    List<Schema.Field> fields = new ArrayList<>();
    for (Schema.Field f : record.getFields()) {
      fields.add(new Schema.Field(f.name(), f.name().equals(field) ? grown : f.schema(), f.doc(), f.defaultVal()));
    }
    return Schema.createRecord(record.getName(), record.getDoc(), record.getNamespace(), false, fields);
  }

  private static <T> T read(Schema reader, Schema writer, GenericRecord written) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
    new GenericDatumWriter<GenericRecord>(writer).write(written, encoder);
    encoder.flush();
    return new SpecificDatumReader<T>(writer, reader)
        .read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
  }
}
