package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.StoredValues;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/** What the wheel writes: AckTimeout records (with the final header and their meters) and quarantined state. */
final class WheelOutput {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WheelOutput.class);

  private final ProcessorContext<Object, Object> context;
  private final AckWheelProcessor.StoreNames names;
  private final AckWheelMetrics metrics;

  WheelOutput(ProcessorContext<Object, Object> context, AckWheelProcessor.StoreNames names, AckWheelMetrics metrics) {
    this.context = context;
    this.names = names;
    this.metrics = metrics;
  }

  /** Moves an entry of {@code store} that does not decode to the rejected topic, with its stored bytes. */
  void quarantine(String store, byte[] key, byte[] stored, String user, RuntimeException e, long now) {
    LOG.warn("Entry of {} does not decode; moved to the rejected topic", store, e);
    StoredValues.Undecodable bad = StoredValues.undecodable(stored, e);
    context.forward(StoredValues.rejected(store, key, user, bad, now), names.rejectedSink());
  }

  void emit(TimeoutBatcher.Timeout timeout, long now) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(names.finalHeader(), Boolean.toString(timeout.isFinal()).getBytes(StandardCharsets.UTF_8));
    context.forward(new Record<>(timeout.value().getUserId(), timeout.value(), now, headers), names.timeoutsSink());
    metrics.timeoutEmitted(timeout.isFinal(), timeout.value().getSeqs().size(),
        now - timeout.value().getDeadline().toEpochMilli());
  }
}
