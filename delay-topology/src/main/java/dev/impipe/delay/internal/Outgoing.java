package dev.impipe.delay.internal;

import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.processor.TopicNameExtractor;

/**
 * A value on its way out of the delay processor: the bytes to write and the topic to write them to. The sink picks
 * the topic with {@link #EXTRACTOR} and writes {@link #value()} as is (no re-serialization).
 */
public record Outgoing(String topic, byte[] value) {

  /** Routes each record to its own topic; one sink covers every target, so exactly-once covers them all. */
  public static final TopicNameExtractor<byte[], Outgoing> EXTRACTOR = (key, value, context) -> value.topic();

  /** Writes the carried bytes unchanged. */
  public static final class ValueSerializer implements Serializer<Outgoing> {
    @Override
    public byte[] serialize(String topic, Outgoing data) {
      return data == null ? null : data.value();
    }
  }
}
