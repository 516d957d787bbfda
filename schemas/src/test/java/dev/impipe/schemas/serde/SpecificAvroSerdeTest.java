package dev.impipe.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import dev.impipe.schemas.registry.SchemaRegistryException;
import java.nio.ByteBuffer;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SpecificAvroSerdeTest {

  private static final String URL = "mock://serde-round-trip";
  private static final String TOPIC = "im.test";

  @AfterEach
  void dropRegistry() {
    InMemorySchemaRegistry.drop(URL);
  }

  private static <T extends SpecificRecord> Serde<T> configured(Class<T> type) {
    SpecificAvroSerde<T> serde = new SpecificAvroSerde<>(type);
    serde.configure(Map.of(SchemaRegistryClients.URL_CONFIG, URL), false);
    return serde;
  }

  private static <T extends SpecificRecord> T roundTrip(Class<T> type, T value) {
    Serde<T> serde = configured(type);
    byte[] bytes = serde.serializer().serialize(TOPIC, value);
    return serde.deserializer().deserialize(TOPIC, bytes);
  }

  @Test
  void oneSerializerWritingTwoTopicsAndTwoTypesAlternatelyStampsEachWithItsOwnSchemaId() {
    SpecificAvroSerializer<SpecificRecord> serializer = new SpecificAvroSerializer<>();
    serializer.configure(Map.of(SchemaRegistryClients.URL_CONFIG, URL), false);
    var registry = SchemaRegistryClients.forUrl(URL);
    InboxEntry entry = TestRecords.inboxEntry();
    ChatMessage message = TestRecords.directMessage();
    for (int round = 0; round < 2; round++) {
      for (String topic : new String[] {"im.a", "im.b"}) {
        for (SpecificRecord value : new SpecificRecord[] {entry, message}) {
          ByteBuffer bytes = ByteBuffer.wrap(serializer.serialize(topic, value));
          assertThat(bytes.get()).isEqualTo(WireFormat.MAGIC_BYTE);
          int id = bytes.getInt();
          assertThat(id).as("%s on %s", value.getSchema().getName(), topic)
              .isEqualTo(registry.register(topic + "-value", value.getSchema()));
          assertThat(registry.getById(id)).isEqualTo(value.getSchema());
        }
      }
    }
  }

  @Test
  void everyKindOfFieldSurvivesARoundTrip() {
    // Strings (non-ASCII), enums, nullable unions, timestamps, maps
    ChatMessage message = TestRecords.directMessage();
    assertThat(roundTrip(ChatMessage.class, message)).isEqualTo(message);

    // Nullable long set, other optionals left null
    InboxEntry entry = TestRecords.inboxEntry();
    InboxEntry readEntry = roundTrip(InboxEntry.class, entry);
    assertThat(readEntry).isEqualTo(entry);
    assertThat(readEntry.getReadUpToSeq()).isEqualTo(40L);
    assertThat(readEntry.getBody()).isNull();

    // Bytes and a map of bytes
    ScheduleCommand command = TestRecords.scheduleCommand();
    ScheduleCommand readCommand = roundTrip(ScheduleCommand.class, command);
    assertThat(readCommand).isEqualTo(command);
    assertThat(bytes(readCommand.getValue())).containsExactly(0, 1, 2, 0xFF);
    assertThat(bytes(readCommand.getHeaders().get("trace"))).containsExactly(9, 8);

    // Arrays
    AckTimeout timeout = TestRecords.ackTimeout();
    assertThat(roundTrip(AckTimeout.class, timeout)).isEqualTo(timeout);

    MembershipChange join = TestRecords.join();
    assertThat(roundTrip(MembershipChange.class, join)).isEqualTo(join);
  }

  @Test
  void bytesAreConfluentWireFormatWithTheRegisteredId() {
    Serde<ChatMessage> serde = configured(ChatMessage.class);

    byte[] bytes = serde.serializer().serialize(TOPIC, TestRecords.directMessage());

    int registeredId = InMemorySchemaRegistry.forScope(URL).register(TOPIC + "-value", ChatMessage.getClassSchema());
    assertThat(bytes[0]).as("magic byte").isZero();
    assertThat(ByteBuffer.wrap(bytes, 1, 4).getInt()).as("schema id").isEqualTo(registeredId);
    assertThat(InMemorySchemaRegistry.forScope(URL).getById(registeredId)).isEqualTo(ChatMessage.getClassSchema());
  }

  @Test
  void aPlainConsumerReadsWhatTheSerializerWrote() {
    // The deserializer needs nothing but the registry: a fresh instance (another process) reads the bytes.
    byte[] bytes = configured(InboxEntry.class).serializer().serialize(TOPIC, TestRecords.inboxEntry());

    SpecificAvroDeserializer<InboxEntry> other = new SpecificAvroDeserializer<>(InboxEntry.class,
        SchemaRegistryClients.forUrl(URL));

    assertThat(other.deserialize(TOPIC, bytes)).isEqualTo(TestRecords.inboxEntry());
  }

  @Test
  void nullIsATombstoneBothWays() {
    Serde<ChatMessage> serde = configured(ChatMessage.class);

    assertThat(serde.serializer().serialize(TOPIC, null)).isNull();
    assertThat(serde.deserializer().deserialize(TOPIC, null)).isNull();
  }

  @Test
  void unconfiguredSerdesFailWithAClearMessage() {
    SpecificAvroSerde<ChatMessage> serde = new SpecificAvroSerde<>(ChatMessage.class);

    assertThatThrownBy(() -> serde.serializer().serialize(TOPIC, TestRecords.directMessage()))
        .isInstanceOf(SerializationException.class).hasMessageContaining("configure()");
    assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, new byte[] {0, 0, 0, 0, 1}))
        .isInstanceOf(SerializationException.class).hasMessageContaining("configure()");
  }

  @Test
  void configuringWithoutARegistryUrlNamesTheSetting() {
    SpecificAvroSerde<ChatMessage> serde = new SpecificAvroSerde<>(ChatMessage.class);

    assertThatThrownBy(() -> serde.configure(Map.of(), false))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining(SchemaRegistryClients.URL_CONFIG);
  }

  @Test
  void aRecordWithAMissingRequiredFieldIsASerializationErrorNamingTheTopic() {
    ChatMessage broken = TestRecords.directMessage();
    broken.setSenderId(null);

    assertThatThrownBy(() -> configured(ChatMessage.class).serializer().serialize(TOPIC, broken))
        .isInstanceOf(SerializationException.class)
        .hasMessageContaining("dev.impipe.avro.ChatMessage")
        .hasMessageContaining(TOPIC);
  }

  private static byte[] bytes(ByteBuffer buffer) {
    ByteBuffer copy = buffer.duplicate();
    byte[] out = new byte[copy.remaining()];
    copy.get(out);
    return out;
  }
}
