package dev.impipe.runtime.app;

import dev.impipe.runtime.streams.RejectedHeaders;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An output record that can never be written (too large, or for a topic that does not exist) would otherwise stop
 * the stream thread and be retried forever. This handler sends the input record that produced it to the dead letter
 * queue, with the same headers Kafka Streams uses there, and carries on. Anything else (timeouts, a broker away)
 * still fails, so exactly-once processing retries it after the thread restarts: nothing is dropped for a passing
 * outage. An output of a punctuation has no input record (the delay topology's deliveries): the failed record
 * itself, with its key, value and headers, goes to the dead letter queue instead of an empty one.
 */
public class DeadLetterProductionExceptionHandler implements ProductionExceptionHandler {

  /** The reason code ({@link RejectedHeaders#CODE}) of a record whose output can never be written. */
  public static final String UNWRITABLE = "UNWRITABLE";

  private static final Logger LOG = LoggerFactory.getLogger(DeadLetterProductionExceptionHandler.class);

  private String deadLetterTopic;

  @Override
  public void configure(Map<String, ?> configs) {
    deadLetterTopic = deadLetterTopic(configs);
  }

  /** The dead letter queue of the Streams config {@code configs}, or null when none is configured. */
  static String deadLetterTopic(Map<String, ?> configs) {
    Object topic = configs.get(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG);
    return topic == null ? null : topic.toString();
  }

  @Override
  public Response handleError(ErrorHandlerContext context, ProducerRecord<byte[], byte[]> record,
      Exception exception) {
    boolean permanent = exception instanceof RecordTooLargeException
        || exception instanceof UnknownTopicOrPartitionException || exception instanceof InvalidTopicException;
    if (!permanent || deadLetterTopic == null) {
      return Response.fail();
    }
    boolean punctuation = context.sourceRawKey() == null && context.sourceRawValue() == null;
    if (punctuation) {
      LOG.warn("Cannot write to {} ({}): the record, written by a punctuation, goes to {}", record.topic(),
          exception.getMessage(), deadLetterTopic);
      RecordHeaders headers = record.headers() == null ? new RecordHeaders()
          : new RecordHeaders(record.headers().toArray());
      RejectedHeaders.add(headers, RejectedHeaders.EXCEPTION, exception.getClass().getName());
      RejectedHeaders.add(headers, RejectedHeaders.CODE, UNWRITABLE);
      RejectedHeaders.add(headers, RejectedHeaders.MESSAGE, "cannot write the output to " + record.topic() + ": "
          + exception.getMessage());
      RejectedHeaders.add(headers, RejectedHeaders.TOPIC, record.topic());
      return Response.resume(List.of(new ProducerRecord<>(deadLetterTopic, null, record.key(), record.value(),
          headers)));
    }
    LOG.warn("Cannot write to {} ({}): the input record {}-{}@{} goes to {}", record.topic(), exception.getMessage(),
        context.topic(), context.partition(), context.offset(), deadLetterTopic);
    RecordHeaders headers = new RecordHeaders();
    RejectedHeaders.add(headers, RejectedHeaders.EXCEPTION, exception.getClass().getName());
    RejectedHeaders.add(headers, RejectedHeaders.CODE, UNWRITABLE);
    RejectedHeaders.add(headers, RejectedHeaders.MESSAGE, "cannot write the output to " + record.topic() + ": "
        + exception.getMessage());
    RejectedHeaders.addOrigin(headers, context.topic(), context.partition(), context.offset());
    return Response.resume(List.of(new ProducerRecord<>(deadLetterTopic, null, context.sourceRawKey(),
        context.sourceRawValue(), headers)));
  }
}
