package dev.impipe.runtime.streams;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;

/**
 * The headers of a record in the rejected topic ({@code im.rejected}): the one place that names them. The first five
 * are those of Kafka Streams' dead letter queue, so a rejected record reads the same whoever wrote it (the
 * processing and production exception handlers, a processor quarantining a stored entry or an undeliverable one).
 * Values are UTF-8 text, except {@link #STORE_KEY}.
 */
public final class RejectedHeaders {

  /** Class name of the exception: {@link RejectedRecord}'s for bad input. */
  public static final String EXCEPTION = "__streams.errors.exception";
  /** Why, for people (e.g. {@code sender mallory is not a member of group g1}). */
  public static final String MESSAGE = "__streams.errors.message";
  /** The topic the record came from (or, for a record that could not be written, was due to go to). */
  public static final String TOPIC = "__streams.errors.topic";
  /** Partition and offset the record came from (absent when it was not an input record). */
  public static final String PARTITION = "__streams.errors.partition";
  public static final String OFFSET = "__streams.errors.offset";
  /** Why, machine-readable: {@link RejectedRecord#code()} ({@code INVALID}, {@code NOT_MEMBER}, ...). */
  public static final String CODE = "im.reject.code";
  /** The component that rejected it, where it says ({@code delay}). */
  public static final String SOURCE = "im.reject.source";
  /** A quarantined stored entry: the store it was removed from, and its key there (raw bytes). */
  public static final String STORE = "im-store";
  public static final String STORE_KEY = "im-store-key";

  private RejectedHeaders() {}

  /** Adds {@code name} with {@code value} as UTF-8, unless {@code value} is null. */
  public static void add(Headers headers, String name, String value) {
    if (value != null) {
      headers.add(name, value.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** Adds the reason headers of {@code rejected}: exception, message, code, and source if it names one. */
  public static void add(Headers headers, RejectedRecord rejected) {
    add(headers, EXCEPTION, RejectedRecord.class.getName());
    add(headers, MESSAGE, rejected.reason());
    add(headers, CODE, rejected.code());
    add(headers, SOURCE, rejected.source());
  }

  /** Adds where a rejected input record came from: topic, partition and offset. */
  public static void addOrigin(Headers headers, String topic, int partition, long offset) {
    add(headers, TOPIC, topic);
    add(headers, PARTITION, Integer.toString(partition));
    add(headers, OFFSET, Long.toString(offset));
  }
}
