package dev.impipe.runtime.app;

import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The processing exception handler of every app: a {@link RejectedRecord} (bad input) sends the input record, its
 * key, value and headers as they came, to the dead letter queue ({@code im.rejected}) with the reason headers of
 * {@link RejectedHeaders}, and processing goes on. Anything else (a NullPointerException, an IllegalStateException,
 * a store that cannot be written) is a bug or an outage, not bad input: it fails the stream thread, and the uncaught
 * exception handler ({@link StreamThreadReplacement}) decides what happens next. Under exactly-once the failed task's
 * transaction is aborted, so nothing of the failed record is committed and it is processed again.
 */
public class DeadLetterProcessingExceptionHandler implements ProcessingExceptionHandler {

  private static final Logger LOG = LoggerFactory.getLogger(DeadLetterProcessingExceptionHandler.class);

  private String deadLetterTopic;

  @Override
  public void configure(Map<String, ?> configs) {
    deadLetterTopic = DeadLetterProductionExceptionHandler.deadLetterTopic(configs);
  }

  @Override
  public Response handleError(ErrorHandlerContext context, Record<?, ?> record, Exception exception) {
    if (!(exception instanceof RejectedRecord rejected)) {
      LOG.error("Processor {} of task {} failed on {}-{}@{} with {}: not a RejectedRecord, so a bug or an outage, "
          + "not bad input; the stream thread fails", context.processorNodeId(), context.taskId(), context.topic(),
          context.partition(), context.offset(), exception.toString());
      return Response.fail();
    }
    if (context.topic() == null) {
      // A punctuation has no input record to dead-letter: it must write what it rejects itself.
      LOG.error("Processor {} of task {} threw a RejectedRecord ({}) outside of process(): there is no input record "
          + "to dead-letter; the stream thread fails", context.processorNodeId(), context.taskId(), rejected.reason());
      return Response.fail();
    }
    if (deadLetterTopic == null) {
      LOG.warn("Rejected {}-{}@{} at {}: {} {} (no dead letter queue configured: the record is skipped)",
          context.topic(), context.partition(), context.offset(), context.processorNodeId(), rejected.code(),
          rejected.reason());
      return Response.resume();
    }
    LOG.warn("Rejected {}-{}@{} at {}: {} {}; the record goes to {}", context.topic(), context.partition(),
        context.offset(), context.processorNodeId(), rejected.code(), rejected.reason(), deadLetterTopic);
    return Response.resume(List.of(deadLetter(deadLetterTopic, context, rejected)));
  }

  /** The dead letter of the input record of {@code context}, rejected with {@code rejected}. */
  static ProducerRecord<byte[], byte[]> deadLetter(String topic, ErrorHandlerContext context,
      RejectedRecord rejected) {
    RecordHeaders headers = context.headers() == null ? new RecordHeaders()
        : new RecordHeaders(context.headers().toArray());
    RejectedHeaders.add(headers, rejected);
    RejectedHeaders.addOrigin(headers, context.topic(), context.partition(), context.offset());
    Long timestamp = context.timestamp() >= 0 ? context.timestamp() : null;
    return new ProducerRecord<>(topic, null, timestamp, context.sourceRawKey(), context.sourceRawValue(), headers);
  }
}
