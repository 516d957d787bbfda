package dev.impipe.runtime.app;

import dev.impipe.runtime.topics.Topic;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * The producer an HTTP route writes one record per request with: idempotent, {@code acks=all}, no linger, and a
 * bounded {@code max.block.ms} so a request does not hold an HTTP worker for long when the broker is away (the route
 * answers 503 instead). Closed when the process stops.
 */
public final class RequestProducers {

  private RequestProducers() {}

  /**
   * @param clientId the client id after the topic prefix ({@code inbox-store-cursors})
   * @param maxBlockMs how long a send may wait for metadata or buffer space
   */
  public static <V> KafkaProducer<String, V> create(ComponentContext context, Topic<String, V> topic,
      String clientId, long maxBlockMs) {
    Map<String, Object> props = new HashMap<>(context.config().clientProperties());
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlockMs);
    props.put(ProducerConfig.CLIENT_ID_CONFIG, context.config().topicPrefix() + clientId);
    return context.closeOnShutdown(new KafkaProducer<>(props, topic.keySerde().serializer(),
        topic.valueSerde().serializer()));
  }
}
