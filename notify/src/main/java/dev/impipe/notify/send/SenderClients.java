package dev.impipe.notify.send;

import dev.impipe.avro.Notification;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** The sender's Kafka clients and the records it writes besides dead letters. */
final class SenderClients {

  private SenderClients() {}

  /** read_committed, manual commits, from the earliest record a new group has not seen. */
  static KafkaConsumer<byte[], byte[]> consumer(Map<String, Object> clientProperties, String groupId,
      int maxInFlight) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.putAll(only(clientProperties, ConsumerConfig.configNames()));
    props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Math.max(1, Math.min(500, maxInFlight)));
    return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** Idempotent, {@code acks=all}: a removal or dead letter is on the broker before its record counts as done. */
  static KafkaProducer<byte[], byte[]> producer(Map<String, Object> clientProperties) {
    Map<String, Object> props = new HashMap<>(only(clientProperties, ProducerConfig.configNames()));
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /** The removal of exactly the registration {@code n} was sent to (a newer one of the device stays). */
  static PushRegistration removal(Notification n, String reason, Instant now) {
    return PushRegistration.newBuilder().setUserId(n.getUserId()).setDeviceId(n.getDeviceId())
        .setRegistrationId(n.getRegistrationId()).setProvider(provider(n.getProvider())).setRemoved(true)
        .setRemovedReason(reason).setAt(now).build();
  }

  static PushProvider provider(String name) {
    try {
      return PushProvider.valueOf(name);
    } catch (IllegalArgumentException | NullPointerException e) {
      return PushProvider.UNKNOWN;
    }
  }

  /** Sleeps; false when interrupted (the interrupt flag is set again). */
  static boolean sleep(long millis) {
    try {
      Thread.sleep(millis);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static Map<String, Object> only(Map<String, Object> props, Set<String> known) {
    Map<String, Object> out = new HashMap<>();
    props.forEach((k, v) -> {
      if (known.contains(k) || k.startsWith("sasl.") || k.startsWith("ssl.")) {
        out.put(k, v);
      }
    });
    return out;
  }
}
