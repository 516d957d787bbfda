package dev.impipe.schemas.serde;

import dev.impipe.schemas.registry.SchemaRegistryClient;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/** Serde of one SpecificRecord type in the Confluent wire format. */
public class SpecificAvroSerde<T extends SpecificRecord> implements Serde<T> {

  private final SpecificAvroSerializer<T> serializer;
  private final SpecificAvroDeserializer<T> deserializer;

  /** Configure with {@code schema.registry.url} before use. */
  public SpecificAvroSerde(Class<T> type) {
    this.serializer = new SpecificAvroSerializer<>();
    this.deserializer = new SpecificAvroDeserializer<>(type);
  }

  /** Ready to use with the given registry client. */
  public SpecificAvroSerde(Class<T> type, SchemaRegistryClient registry, boolean isKey) {
    this.serializer = new SpecificAvroSerializer<>(registry, isKey);
    this.deserializer = new SpecificAvroDeserializer<>(type, registry);
  }

  @Override
  public void configure(Map<String, ?> configs, boolean isKey) {
    serializer.configure(configs, isKey);
    deserializer.configure(configs, isKey);
  }

  @Override
  public Serializer<T> serializer() {
    return serializer;
  }

  @Override
  public Deserializer<T> deserializer() {
    return deserializer;
  }
}
