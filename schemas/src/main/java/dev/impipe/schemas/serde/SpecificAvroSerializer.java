package dev.impipe.schemas.serde;

import dev.impipe.schemas.registry.SchemaRegistryClient;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;

/** Writes a SpecificRecord in the Confluent wire format, registering its schema under the topic's subject. */
public class SpecificAvroSerializer<T extends SpecificRecord> implements Serializer<T> {

  private SchemaRegistryClient registry;
  private boolean isKey;

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
    int id = registry.register(SchemaRegistryClient.subject(topic, isKey), schema);
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    out.write(WireFormat.MAGIC_BYTE);
    out.write(id >>> 24);
    out.write(id >>> 16);
    out.write(id >>> 8);
    out.write(id);
    try {
      BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
      new SpecificDatumWriter<T>(schema).write(data, encoder);
      encoder.flush();
    } catch (IOException | RuntimeException e) {
      throw new SerializationException("Cannot serialize " + schema.getFullName() + " for topic " + topic
          + ": " + e.getMessage(), e);
    }
    return out.toByteArray();
  }
}
