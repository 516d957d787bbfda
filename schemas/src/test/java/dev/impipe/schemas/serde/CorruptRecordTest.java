package dev.impipe.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.MembershipChange;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import dev.impipe.schemas.registry.SchemaRegistryException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Bytes that are not a valid record are reported clearly (topic, id, what is wrong), never mis-read. */
class CorruptRecordTest {

  private static final String URL = "mock://corrupt-records";
  private static final String TOPIC = "im.messages";

  private final InMemorySchemaRegistry registry = InMemorySchemaRegistry.forScope(URL);
  private final SpecificAvroSerializer<ChatMessage> serializer = new SpecificAvroSerializer<>(registry, false);
  private final SpecificAvroDeserializer<ChatMessage> deserializer =
      new SpecificAvroDeserializer<>(ChatMessage.class, registry);

  @AfterEach
  void dropRegistry() {
    InMemorySchemaRegistry.drop(URL);
  }

  private byte[] validRecord() {
    return serializer.serialize(TOPIC, TestRecords.directMessage());
  }

  @Test
  void wrongMagicByteIsRejectedNamingTheTopic() {
    byte[] bytes = validRecord();
    bytes[0] = 1;

    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, bytes))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("magic byte 1")
        .hasMessageContaining(TOPIC);
  }

  @Test
  void plainJsonOnAnAvroTopicIsRejectedAsNotWireFormat() {
    byte[] json = "{\"messageId\": \"m\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, json))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("not Confluent wire format")
        .hasMessageContaining(TOPIC);
  }

  @Test
  void recordShorterThanTheHeaderIsRejected() {
    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, new byte[] {0, 0, 1}))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("3 bytes")
        .hasMessageContaining(TOPIC)
        .hasMessageContaining("too short");
    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, new byte[0]))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("0 bytes");
  }

  @Test
  void truncatedBodyIsReportedWithTopicAndSchemaId() {
    byte[] valid = validRecord();
    int id = ByteBuffer.wrap(valid, 1, 4).getInt();
    byte[] truncated = Arrays.copyOf(valid, valid.length - 3);

    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, truncated))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("Corrupt ChatMessage")
        .hasMessageContaining("schema id " + id)
        .hasMessageContaining(TOPIC);
  }

  @Test
  void headerWithoutBodyIsReported() {
    byte[] headerOnly = Arrays.copyOf(validRecord(), WireFormat.HEADER_SIZE);

    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, headerOnly))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("Corrupt ChatMessage")
        .hasMessageContaining(TOPIC);
  }

  @Test
  void garbageBodyIsReportedNotMisread() {
    byte[] valid = validRecord();
    // Header of a real record, then a negative string length (zig-zag 0x01 = -1) where messageId starts.
    byte[] garbage = Arrays.copyOf(valid, WireFormat.HEADER_SIZE + 4);
    garbage[WireFormat.HEADER_SIZE] = 0x01;

    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, garbage))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("Corrupt ChatMessage")
        .hasMessageContaining(TOPIC);
  }

  @Test
  void trailingBytesAfterARecordAreReported() {
    byte[] valid = validRecord();
    byte[] padded = Arrays.copyOf(valid, valid.length + 2);

    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, padded))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("trailing bytes")
        .hasMessageContaining(TOPIC);
  }

  @Test
  void recordOfAnotherTypeIsReportedNotMisread() {
    // A MembershipChange produced to the wrong topic: the reader cannot resolve it to a ChatMessage.
    byte[] other = new SpecificAvroSerializer<MembershipChange>(registry, false).serialize(TOPIC, TestRecords.join());

    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, other))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("ChatMessage")
        .hasMessageContaining(TOPIC);
  }

  @Test
  void unknownSchemaIdNamesTheIdAndTheRegistry() {
    byte[] bytes = validRecord();
    ByteBuffer.wrap(bytes, 1, 4).putInt(4242);

    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, bytes))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("4242")
        .hasMessageContaining(URL);
  }

  @Test
  void aCorruptRecordDoesNotBreakTheNextGoodOne() {
    byte[] valid = validRecord();
    byte[] truncated = Arrays.copyOf(valid, valid.length - 1);
    assertThatThrownBy(() -> deserializer.deserialize(TOPIC, truncated)).isInstanceOf(SerializationException.class);

    assertThat(deserializer.deserialize(TOPIC, valid)).isEqualTo(TestRecords.directMessage());
  }
}
