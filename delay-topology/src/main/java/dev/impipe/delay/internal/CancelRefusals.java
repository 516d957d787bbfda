package dev.impipe.delay.internal;

import org.apache.kafka.streams.processor.api.Record;

/**
 * Tells the requester of a refused CANCEL (someone else's schedule): the record to write, e.g. a REJECTED entry to
 * the requester's inbox. Built by the topology, which knows the application's topics and schemas; the processor
 * itself only moves bytes.
 */
@FunctionalInterface
public interface CancelRefusals {

  /** Nobody is told (only the rejected topic records the refusal). */
  CancelRefusals NONE = (requester, scheduleId, schedule, reason, timestamp) -> null;

  /**
   * The notice for {@code requester}, or null for none.
   *
   * @param schedule the schedule the CANCEL was refused for (its target key is the conversation id of a scheduled
   *     chat message)
   */
  Record<byte[], Outgoing> notice(String requester, String scheduleId, ScheduledEntry schedule, String reason,
      long timestamp);
}
