package dev.impipe.schemas.serde;

import dev.impipe.avro.InboxEntry;
import dev.impipe.schemas.registry.SchemaRegistryClient;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;

/** Writes a SpecificRecord in the Confluent wire format, registering its schema under the topic's subject. */
public class SpecificAvroSerializer<T extends SpecificRecord> implements Serializer<T> {

  private SchemaRegistryClient registry;
  private boolean isKey;
  /** The last topic and schema written, their registry id and writer (immutable, so safe to share). */
  private volatile Slot<T> last;

  private record Slot<T>(String topic, Schema schema, int id, DatumWriter<T> writer) {}

  /**
   * The writer for {@code schema}: a hand-written one for the hot records (their generated classes get no fast
   * custom coders from Avro because of their timestamp logical types), else Avro's {@link SpecificDatumWriter}.
   */
  @SuppressWarnings("unchecked")
  static <T> DatumWriter<T> writerFor(Schema schema) {
    if (schema == InboxEntry.getClassSchema()) {
      return (DatumWriter<T>) new InboxEntryWriter();
    }
    return new SpecificDatumWriter<>(schema);
  }

  /** For Kafka's reflective construction; {@link #configure} must follow. */
  public SpecificAvroSerializer() {}

  public SpecificAvroSerializer(SchemaRegistryClient registry, boolean isKey) {
    this.registry = registry;
    this.isKey = isKey;
  }

  @Override
  public void configure(Map<String, ?> configs, boolean isKey) {
    this.isKey = isKey;
    Object url = configs.get(SchemaRegistryClients.URL_CONFIG);
    this.registry = SchemaRegistryClients.forUrl(url == null ? null : url.toString());
  }

  @Override
  public byte[] serialize(String topic, T data) {
    if (data == null) {
      return null;
    }
    if (registry == null) {
      throw new SerializationException("SpecificAvroSerializer used before configure()");
    }
    Schema schema = data.getSchema();
    Slot<T> slot = last;
    if (slot == null || slot.topic != topic || slot.schema != schema) {
      // One slot is enough: a serializer instance nearly always writes one record type to one topic.
      slot = new Slot<>(topic, schema, registry.register(SchemaRegistryClient.subject(topic, isKey), schema),
          writerFor(schema));
      last = slot;
    }
    int id = slot.id;
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    out.write(WireFormat.MAGIC_BYTE);
    out.write(id >>> 24);
    out.write(id >>> 16);
    out.write(id >>> 8);
    out.write(id);
    try {
      BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
      slot.writer.write(data, encoder);
      encoder.flush();
    } catch (IOException | RuntimeException e) {
      throw new SerializationException("Cannot serialize " + schema.getFullName() + " for topic " + topic
          + ": " + e.getMessage(), e);
    }
    return out.toByteArray();
  }
}
