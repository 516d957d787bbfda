package dev.impipe.push;

import dev.impipe.avro.Ack;
import dev.impipe.avro.Delivery;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the gateway writes: a Delivery per push, an Ack and the device cursor per client ACK (all keyed by user), and
 * the records its reader could not decode (to the rejected topic).
 */
final class PushOutput implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PushOutput.class);

  /** The {@code im.reject.source} of what the gateway quarantines. */
  static final String SOURCE = "push-gateway";

  private final ImTopics topics;
  private final KafkaProducer<String, Object> producer;

  PushOutput(ImTopics topics, Map<String, Object> clientProperties) {
    this.topics = topics;
    Map<String, Object> props = new HashMap<>();
    clientProperties.forEach((k, v) -> {
      if (ProducerConfig.configNames().contains(k) || k.startsWith("sasl.") || k.startsWith("ssl.")) {
        props.put(k, v);
      }
    });
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 5);
    this.producer = new KafkaProducer<>(props, new StringSerializer(), new ValueSerializer(topics));
  }

  void delivery(String user, String device, long seq, String messageId, int attempt) {
    send(topics.deliveries().name(), user, Delivery.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq)
        .setMessageId(messageId).setPushedAt(Instant.now()).setAttempt(attempt).build());
  }

  void ack(String user, String device, long seq) {
    send(topics.acks().name(), user, Ack.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq)
        .setAckedAt(Instant.now()).build());
  }

  /** A cursor component: {@code device} is the device id, or {@code <device>#<group>} for a large group's position. */
  void cursor(String user, String device, long seq) {
    send(topics.deviceCursors().name(), user, DeviceCursor.newBuilder().setUserId(user).setDeviceId(device)
        .setSeq(seq).build());
  }

  /**
   * Quarantines a record the gateway read and could not decode: key, value and headers as they came, plus the
   * reason and origin headers every component writes to the rejected topic.
   */
  void rejected(ConsumerRecord<String, byte[]> r, String code, String reason) {
    ProducerRecord<String, Object> out = new ProducerRecord<>(topics.rejected().name(), null, r.key(), r.value(),
        new RecordHeaders(r.headers().toArray()));
    RejectedHeaders.add(out.headers(), new RejectedRecord(code, reason, SOURCE));
    RejectedHeaders.addOrigin(out.headers(), r.topic(), r.partition(), r.offset());
    producer.send(out, (md, e) -> {
      if (e != null) {
        LOG.error("{}-{}@{} not quarantined: {}", r.topic(), r.partition(), r.offset(), e.toString());
      }
    });
  }

  private void send(String topic, String key, Object value) {
    producer.send(new ProducerRecord<>(topic, key, value), (md, e) -> {
      if (e != null) {
        LOG.warn("{} for {} not written: {}", topic, key, e.toString());
      }
    });
  }

  @Override
  public void close() {
    producer.close(Duration.ofSeconds(10));
  }

  /** Serializes each value with its own topic's serde. */
  private static final class ValueSerializer implements Serializer<Object> {
    private final Serializer<Delivery> deliveries;
    private final Serializer<Ack> acks;
    private final Serializer<DeviceCursor> cursors;

    ValueSerializer(ImTopics topics) {
      this.deliveries = topics.deliveries().valueSerde().serializer();
      this.acks = topics.acks().valueSerde().serializer();
      this.cursors = topics.deviceCursors().valueSerde().serializer();
    }

    @Override
    public byte[] serialize(String topic, Object data) {
      if (data instanceof Delivery d) {
        return deliveries.serialize(topic, d);
      }
      if (data instanceof Ack a) {
        return acks.serialize(topic, a);
      }
      if (data instanceof DeviceCursor c) {
        return cursors.serialize(topic, c);
      }
      if (data instanceof byte[] raw) {
        return raw; // a quarantined record, as it came
      }
      throw new IllegalArgumentException("the push gateway does not write " + data + " to " + topic);
    }
  }
}
