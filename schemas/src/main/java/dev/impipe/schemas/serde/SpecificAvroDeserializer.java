package dev.impipe.schemas.serde;

import dev.impipe.schemas.registry.SchemaRegistryClient;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads the Confluent wire format into a SpecificRecord: writer schema = the registered one, reader
 * schema = the generated class, so records from older and newer writers both read.
 */
public class SpecificAvroDeserializer<T extends SpecificRecord> implements Deserializer<T> {

  private final Class<T> type;
  private final Schema readerSchema;
  private final Map<Integer, SpecificDatumReader<T>> readersByWriterId = new ConcurrentHashMap<>();
  private SchemaRegistryClient registry;

  public SpecificAvroDeserializer(Class<T> type) {
    this.type = type;
    this.readerSchema = SpecificData.get().getSchema(type);
  }

  public SpecificAvroDeserializer(Class<T> type, SchemaRegistryClient registry) {
    this(type);
    this.registry = registry;
  }

  @Override
  public void configure(Map<String, ?> configs, boolean isKey) {
    Object url = configs.get(SchemaRegistryClients.URL_CONFIG);
    this.registry = SchemaRegistryClients.forUrl(url == null ? null : url.toString());
  }

  @Override
  public T deserialize(String topic, byte[] data) {
    if (data == null) {
      return null;
    }
    if (registry == null) {
      throw new SerializationException("SpecificAvroDeserializer used before configure()");
    }
    if (data.length < WireFormat.HEADER_SIZE) {
      throw new SerializationException("Record of " + data.length + " bytes on topic " + topic
          + " is too short for the Confluent wire format (magic byte + 4-byte schema id)");
    }
    if (data[0] != WireFormat.MAGIC_BYTE) {
      throw new SerializationException("Unknown magic byte " + data[0] + " on topic " + topic
          + ": not Confluent wire format (expected 0)");
    }
    int id = ByteBuffer.wrap(data, 1, 4).getInt();
    SpecificDatumReader<T> reader = readersByWriterId.computeIfAbsent(id,
        writerId -> new SpecificDatumReader<>(registry.getById(writerId), readerSchema));
    try {
      BinaryDecoder decoder = DecoderFactory.get()
          .binaryDecoder(data, WireFormat.HEADER_SIZE, data.length - WireFormat.HEADER_SIZE, null);
      T value = reader.read(null, decoder);
      if (!decoder.isEnd()) {
        throw new SerializationException(data.length - WireFormat.HEADER_SIZE
            + "-byte body has trailing bytes after a " + type.getSimpleName());
      }
      return value;
    } catch (IOException | RuntimeException e) {
      if (e instanceof SerializationException se && se.getCause() == null) {
        throw new SerializationException("Corrupt " + type.getSimpleName() + " (schema id " + id + ") on topic "
            + topic + ": " + se.getMessage());
      }
      throw new SerializationException("Corrupt " + type.getSimpleName() + " (schema id " + id + ") on topic "
          + topic + ": " + e, e);
    }
  }
}
