package dev.impipe.delay.internal;

import java.util.Map;

/**
 * What the schedule store holds for one schedule: the record to deliver, as opaque bytes.
 *
 * @param deliverAtMs the requested delivery time (epoch millis), for lateness and the scheduled-at header
 * @param topic the target topic
 * @param key the target record's key bytes, or null
 * @param value the target record's value bytes (already serialized for the target topic), or null
 * @param headers the target record's headers
 */
public record ScheduledEntry(long deliverAtMs, String topic, byte[] key, byte[] value, Map<String, byte[]> headers) {}
