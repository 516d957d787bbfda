package dev.impipe.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Reader = the generated class, writer = whatever schema the producer registered. */
class SchemaEvolutionTest {

  private static final String URL = "mock://schema-evolution";
  private static final String TOPIC = "im.messages";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final InMemorySchemaRegistry registry = InMemorySchemaRegistry.forScope(URL);
  private final SpecificAvroDeserializer<ChatMessage> deserializer =
      new SpecificAvroDeserializer<>(ChatMessage.class, registry);

  @AfterEach
  void dropRegistry() {
    InMemorySchemaRegistry.drop(URL);
  }

  @Test
  void anOlderWriterWithoutOptionalFieldsIsReadWithTheirDefaults() throws IOException {
    // Given: a producer still on a ChatMessage schema from before readUpToSeq and attributes existed
    Schema older = chatMessageSchema(fields -> removeFields(fields, Set.of("readUpToSeq", "attributes")));
    int olderId = registry.register(TOPIC + "-value", older);
    GenericRecord written = new GenericData.Record(older);
    written.put("messageId", "m-old");
    written.put("clientMsgId", "c-old");
    written.put("conversationId", "g-1");
    written.put("conversationType", new GenericData.EnumSymbol(older.getField("conversationType").schema(), "GROUP"));
    written.put("type", new GenericData.EnumSymbol(older.getField("type").schema(), "MESSAGE"));
    written.put("senderId", "alice");
    written.put("groupId", "g-1");
    written.put("body", "from the past");
    written.put("sentAt", TestRecords.SENT_AT.toEpochMilli());

    // When: today's consumer reads it
    ChatMessage read = deserializer.deserialize(TOPIC, TestRecords.wireFormat(olderId, older, written));

    // Then: the fields it has are read, the missing ones take the defaults of the current schema
    assertThat(read.getMessageId()).isEqualTo("m-old");
    assertThat(read.getConversationType()).isEqualTo(ConversationType.GROUP);
    assertThat(read.getType()).isEqualTo(MessageType.MESSAGE);
    assertThat(read.getGroupId()).isEqualTo("g-1");
    assertThat(read.getBody()).isEqualTo("from the past");
    assertThat(read.getSentAt()).isEqualTo(TestRecords.SENT_AT);
    assertThat(read.getReadUpToSeq()).isNull();
    assertThat(read.getAttributes()).isNotNull().isEmpty();
  }

  @Test
  void aNewerWriterWithAnExtraOptionalFieldIsReadByTheCurrentClass() throws IOException {
    // Given: a producer on a future schema with "editedAt" inserted before sentAt (so the reader must skip it)
    Schema newer = chatMessageSchema(fields -> {
      ObjectNode editedAt = JSON.createObjectNode();
      editedAt.put("name", "editedAt");
      editedAt.set("type", JSON.readTree("[\"null\", \"long\"]"));
      editedAt.putNull("default");
      fields.insert(indexOf(fields, "sentAt"), editedAt);
    });
    int newerId = registry.register(TOPIC + "-value", newer);
    GenericRecord written = new GenericData.Record(newer);
    written.put("messageId", "m-new");
    written.put("clientMsgId", "c-new");
    written.put("conversationId", "d:alice:bob");
    written.put("conversationType", new GenericData.EnumSymbol(newer.getField("conversationType").schema(), "DIRECT"));
    written.put("type", new GenericData.EnumSymbol(newer.getField("type").schema(), "READ"));
    written.put("senderId", "bob");
    written.put("readUpToSeq", 17L);
    written.put("editedAt", 1_234_567L);
    written.put("sentAt", TestRecords.SENT_AT.toEpochMilli());
    written.put("attributes", Map.of("client", "ios"));

    // When
    ChatMessage read = deserializer.deserialize(TOPIC, TestRecords.wireFormat(newerId, newer, written));

    // Then: the unknown field is skipped and every later field is still in the right place
    assertThat(read.getMessageId()).isEqualTo("m-new");
    assertThat(read.getType()).isEqualTo(MessageType.READ);
    assertThat(read.getReadUpToSeq()).isEqualTo(17L);
    assertThat(read.getSentAt()).isEqualTo(TestRecords.SENT_AT);
    assertThat(read.getAttributes()).containsExactly(Map.entry("client", "ios"));
    assertThat(read.getSchema().getField("editedAt")).isNull();
  }

  @Test
  void recordsFromDifferentWriterVersionsInterleaveOnOneTopic() throws IOException {
    Schema older = chatMessageSchema(fields -> removeFields(fields, Set.of("attributes")));
    int olderId = registry.register(TOPIC + "-value", older);
    GenericRecord old = new GenericData.Record(older);
    for (Schema.Field f : older.getFields()) {
      if (f.hasDefaultValue()) {
        old.put(f.name(), GenericData.get().getDefaultValue(f));
      }
    }
    old.put("messageId", "m-old");
    old.put("clientMsgId", "c-old");
    old.put("conversationId", "c");
    old.put("conversationType", new GenericData.EnumSymbol(older.getField("conversationType").schema(), "DIRECT"));
    old.put("type", new GenericData.EnumSymbol(older.getField("type").schema(), "MESSAGE"));
    old.put("senderId", "alice");
    old.put("sentAt", 1L);
    byte[] current =
        new SpecificAvroSerializer<ChatMessage>(registry, false).serialize(TOPIC, TestRecords.directMessage());

    List<ChatMessage> read = List.of(
        deserializer.deserialize(TOPIC, TestRecords.wireFormat(olderId, older, old)),
        deserializer.deserialize(TOPIC, current),
        deserializer.deserialize(TOPIC, TestRecords.wireFormat(olderId, older, old)));

    assertThat(read).extracting(ChatMessage::getMessageId).containsExactly("m-old", "m-1", "m-old");
    assertThat(read.get(1)).isEqualTo(TestRecords.directMessage());
  }

  @FunctionalInterface
  private interface FieldEdit {
    void apply(ArrayNode fields) throws IOException;
  }

  /** The current ChatMessage schema with its field list edited. */
  private static Schema chatMessageSchema(FieldEdit edit) throws IOException {
    ObjectNode schema = (ObjectNode) JSON.readTree(ChatMessage.getClassSchema().toString());
    edit.apply((ArrayNode) schema.get("fields"));
    return new Schema.Parser().parse(schema.toString());
  }

  private static void removeFields(ArrayNode fields, Set<String> names) {
    for (int i = fields.size() - 1; i >= 0; i--) {
      if (names.contains(fields.get(i).get("name").asText())) {
        fields.remove(i);
      }
    }
  }

  private static int indexOf(ArrayNode fields, String name) {
    for (int i = 0; i < fields.size(); i++) {
      if (fields.get(i).get("name").asText().equals(name)) {
        return i;
      }
    }
    throw new IllegalArgumentException(name);
  }
}
