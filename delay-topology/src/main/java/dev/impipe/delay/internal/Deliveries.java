package dev.impipe.delay.internal;

import dev.impipe.delay.DelayHeaders;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.StoredValues;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Record;

/** The records a sweep writes: a due schedule to its target (or to the rejected topic), an undecodable entry. */
final class Deliveries {

  private Deliveries() {}

  /**
   * The record for a schedule due now: to its target with the {@link DelayHeaders#SCHEDULED_AT} header, or, if
   * {@code badTarget} says why the target may no longer be written (it went away, or the allow-list changed), to
   * {@code rejectedTopic} with that reason.
   */
  static Record<byte[], Outgoing> due(byte[] id, ScheduledEntry entry, long now, Optional<String> badTarget,
      String rejectedTopic) {
    Headers headers = new RecordHeaders();
    entry.headers().forEach(headers::add);
    if (badTarget.isPresent()) {
      headers.add(DelayHeaders.SCHEDULE_ID, id);
      RejectedHeaders.add(headers, RejectedHeaders.MESSAGE, "undeliverable at " + now + ": " + badTarget.get());
      RejectedHeaders.add(headers, RejectedHeaders.CODE, "TARGET");
      RejectedHeaders.add(headers, RejectedHeaders.SOURCE, DelayProcessor.SOURCE);
      RejectedHeaders.add(headers, RejectedHeaders.TOPIC, entry.topic());
      return new Record<>(entry.key(), new Outgoing(rejectedTopic, entry.value()), now, headers);
    }
    headers.add(DelayHeaders.SCHEDULED_AT, Long.toString(entry.deliverAtMs()).getBytes(StandardCharsets.UTF_8));
    return new Record<>(entry.key(), new Outgoing(entry.topic(), entry.value()), now, headers);
  }

  /**
   * An entry of {@code store} that cannot be decoded, for {@code rejectedTopic}: its stored bytes keyed by its
   * schedule id, with the {@link StoredValues#rejected} headers plus the schedule id and the source.
   */
  static Record<byte[], Outgoing> undecodable(String store, byte[] scheduleKey, byte[] stored, RuntimeException cause,
      long now, String rejectedTopic) {
    byte[] id = ScheduleCodec.idOf(scheduleKey);
    Record<byte[], byte[]> out = StoredValues.rejected(store, scheduleKey, new String(id, StandardCharsets.UTF_8),
        StoredValues.undecodable(stored, cause), now);
    out.headers().add(DelayHeaders.SCHEDULE_ID, id);
    RejectedHeaders.add(out.headers(), RejectedHeaders.SOURCE, DelayProcessor.SOURCE);
    return out.withValue(new Outgoing(rejectedTopic, out.value()));
  }
}
