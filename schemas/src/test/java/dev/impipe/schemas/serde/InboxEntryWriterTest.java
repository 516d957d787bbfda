package dev.impipe.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.junit.jupiter.api.Test;

class InboxEntryWriterTest {

  /**
   * The schema InboxEntryWriter was written for, field by field. A change to InboxEntry.avsc fails here first:
   * update InboxEntryWriter (in schema order), then this list.
   */
  private static final List<String> FIELDS = List.of(
      "userId:STRING", "type:ENUM", "conversationId:STRING", "conversationSeq:LONG", "messageId:[NULL, STRING]",
      "senderId:[NULL, STRING]", "body:[NULL, STRING]", "refMessageId:[NULL, STRING]", "readUpToSeq:[NULL, LONG]",
      "timestamp:LONG", "timelineFromSeq:[NULL, LONG]", "readDiffusion:[NULL, BOOLEAN]",
      "clientMsgId:[NULL, STRING]", "reason:[NULL, STRING]", "reasonCode:[NULL, STRING]",
      "rejectedOp:[NULL, STRING]", "targetUserId:[NULL, STRING]", "recalledBy:[NULL, STRING]",
      "muted:[NULL, BOOLEAN]", "pinned:[NULL, BOOLEAN]");

  @Test
  void theSchemaIsTheOneTheWriterWasWrittenFor() {
    List<String> actual = InboxEntry.getClassSchema().getFields().stream()
        .map(f -> f.name() + ":" + type(f.schema())).collect(Collectors.toList());
    assertThat(actual).as("InboxEntry.avsc changed: update InboxEntryWriter, then FIELDS").isEqualTo(FIELDS);
    assertThat(InboxEntry.getClassSchema().getField("type").schema().getEnumSymbols())
        .containsExactly(java.util.Arrays.stream(InboxEntryType.values()).map(Enum::name).toArray(String[]::new));
  }

  @Test
  void writesTheSameBytesAsAvrosWriterForEveryCombinationOfSetAndUnsetFields() throws IOException {
    SplittableRandom random = new SplittableRandom(42);
    // Bit i of the mask sets optional field i; all 2^12 combinations, each with random values and types.
    for (int mask = 0; mask < 1 << 12; mask++) {
      InboxEntry entry = entry(mask, random);
      assertThat(bytes(new InboxEntryWriter(), entry)).as("mask %s: %s", Integer.toBinaryString(mask), entry)
          .isEqualTo(bytes(new SpecificDatumWriter<>(InboxEntry.getClassSchema()), entry));
    }
  }

  @Test
  void entriesThatDifferOnlyInTheirUserShareOneEncodingOfTheRestAndEveryOtherFieldStillCounts() throws IOException {
    SplittableRandom random = new SplittableRandom(7);
    InboxEntryWriter writer = new InboxEntryWriter();
    DatumWriter<InboxEntry> avro = new SpecificDatumWriter<>(InboxEntry.getClassSchema());
    InboxEntry base = entry((1 << 12) - 1, random);
    // Each field after userId changed alone, in turn, after an entry for another recipient of the same values:
    // the writer must notice every one of them (same bytes as Avro's writer), also when a change goes back.
    for (int field = 1; field < InboxEntry.getClassSchema().getFields().size(); field++) {
      InboxEntry sameRest = copy(base);
      sameRest.setUserId("other-recipient");
      assertThat(bytes(writer, sameRest)).isEqualTo(bytes(avro, sameRest));
      InboxEntry changed = copy(base);
      changed.put(field, different(changed.get(field), random));
      assertThat(bytes(writer, changed)).as("field %s changed", InboxEntry.getClassSchema().getFields().get(field))
          .isEqualTo(bytes(avro, changed));
      assertThat(bytes(writer, base)).isEqualTo(bytes(avro, base));
    }
    // An equal value in a new object is re-encoded, with the same bytes.
    InboxEntry equalValues = copy(base);
    equalValues.setBody(new String(base.getBody().toCharArray()));
    assertThat(bytes(writer, equalValues)).isEqualTo(bytes(avro, equalValues));
  }

  @Test
  void theSerializerUsesItForInboxEntriesOnly() {
    assertThat(SpecificAvroSerializer.writerFor(InboxEntry.getClassSchema())).isInstanceOf(InboxEntryWriter.class);
    assertThat(SpecificAvroSerializer.writerFor(dev.impipe.avro.ChatMessage.getClassSchema()))
        .isInstanceOf(SpecificDatumWriter.class);
    assertThatThrownBy(() -> new InboxEntryWriter().setSchema(dev.impipe.avro.ChatMessage.getClassSchema()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aMissingRequiredFieldIsRefusedByName() {
    InboxEntry entry = entry(0, new SplittableRandom(1));
    entry.setConversationId(null);
    assertThatThrownBy(() -> bytes(new InboxEntryWriter(), entry)).isInstanceOf(NullPointerException.class)
        .hasMessageContaining("conversationId");
  }

  private static InboxEntry entry(int mask, SplittableRandom random) {
    InboxEntryType[] types = InboxEntryType.values();
    InboxEntry e = new InboxEntry();
    e.setUserId("u" + random.nextInt(1_000_000) + (random.nextBoolean() ? "é漢" : ""));
    e.setType(types[random.nextInt(types.length)]);
    e.setConversationId(random.nextBoolean() ? "" : "g" + random.nextInt());
    e.setConversationSeq(random.nextBoolean() ? -1L : random.nextLong());
    e.setTimestamp(Instant.ofEpochMilli(random.nextLong(-1L << 40, 1L << 42)));
    e.setMessageId(bit(mask, 0) ? "m" + random.nextLong() : null);
    e.setSenderId(bit(mask, 1) ? "s" + random.nextInt() : null);
    e.setBody(bit(mask, 2) ? "body ✓ " + "x".repeat(random.nextInt(300)) : null);
    e.setRefMessageId(bit(mask, 3) ? "r" + random.nextInt() : null);
    e.setReadUpToSeq(bit(mask, 4) ? random.nextLong() : null);
    e.setTimelineFromSeq(bit(mask, 5) ? random.nextLong(0, Long.MAX_VALUE) : null);
    e.setReadDiffusion(bit(mask, 6) ? random.nextBoolean() : null);
    e.setClientMsgId(bit(mask, 7) ? "c" + random.nextInt() : null);
    e.setReason(bit(mask, 8) ? "not a member of g" : null);
    e.setReasonCode(bit(mask, 9) ? "NOT_MEMBER" : null);
    e.setRejectedOp(bit(mask, 10) ? "MESSAGE" : null);
    boolean last = bit(mask, 11);
    e.setTargetUserId(last ? "t" + random.nextInt() : null);
    e.setRecalledBy(last && random.nextBoolean() ? "" : null);
    // CONVERSATION_SETTINGS flags share the last bit too (2^12 combinations stay enough).
    e.setMuted(last ? random.nextBoolean() : null);
    e.setPinned(last && bit(mask, 0) ? random.nextBoolean() : null);
    return e;
  }

  private static InboxEntry copy(InboxEntry e) {
    InboxEntry c = new InboxEntry();
    for (int i = 0; i < InboxEntry.getClassSchema().getFields().size(); i++) {
      c.put(i, e.get(i));
    }
    return c;
  }

  /** Another value of the same field type (never the same object, never equal). */
  private static Object different(Object value, SplittableRandom random) {
    if (value instanceof String s) {
      return s + "'";
    }
    if (value instanceof Long l) {
      return l + 1 + random.nextInt(10);
    }
    if (value instanceof Boolean b) {
      return !b;
    }
    if (value instanceof Instant t) {
      return t.plusMillis(1 + random.nextInt(10));
    }
    if (value instanceof InboxEntryType t) {
      return InboxEntryType.values()[(t.ordinal() + 1) % InboxEntryType.values().length];
    }
    throw new IllegalArgumentException("no different value for " + value);
  }

  private static boolean bit(int mask, int i) {
    return (mask & (1 << i)) != 0;
  }

  private static byte[] bytes(DatumWriter<InboxEntry> writer, InboxEntry entry) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
    writer.write(entry, encoder);
    encoder.flush();
    return out.toByteArray();
  }

  private static String type(Schema schema) {
    if (schema.getType() == Schema.Type.UNION) {
      return schema.getTypes().stream().map(s -> s.getType().toString()).collect(Collectors.toList()).toString();
    }
    return schema.getType().toString();
  }
}
