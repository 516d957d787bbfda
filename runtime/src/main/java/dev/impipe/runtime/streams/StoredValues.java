package dev.impipe.runtime.streams;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Stored values that may not decode any more (a schema gone from the registry, a corrupt changelog record): a store
 * built with {@link #quarantining(Serde)} throws {@link Undecodable}, which carries the stored bytes, so the
 * processor can move the entry to the rejected topic ({@link #rejected}) and go on with the next one instead of
 * failing on the same key at every punctuation.
 */
public final class StoredValues {

  /** The reason code of a quarantined entry ({@link RejectedHeaders#CODE}). */
  public static final String UNDECODABLE = "UNDECODABLE";

  private StoredValues() {}

  /** A stored value that did not decode; {@link #stored()} are its bytes as the store holds them. */
  public static final class Undecodable extends SerializationException {
    private final byte[] stored;

    Undecodable(byte[] stored, Throwable cause) {
      super("stored value of " + stored.length + " bytes does not decode: " + cause.getMessage(), cause);
      this.stored = stored;
    }

    public byte[] stored() {
      return Arrays.copyOf(stored, stored.length);
    }

    /** The {@link Undecodable} in {@code e}'s causes (stores may wrap it), or null. */
    public static Undecodable in(Throwable e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof Undecodable u) {
          return u;
        }
      }
      return null;
    }
  }

  /** An {@link Undecodable} for bytes a processor failed to decode itself (its own codec). */
  public static Undecodable undecodable(byte[] stored, Throwable cause) {
    return new Undecodable(stored, cause);
  }

  /** {@code serde} whose deserializer throws {@link Undecodable} (with the bytes) for any failure. */
  public static <V> Serde<V> quarantining(Serde<V> serde) {
    Deserializer<V> inner = serde.deserializer();
    Deserializer<V> outer = new Deserializer<>() {
      @Override
      public V deserialize(String topic, byte[] data) {
        try {
          return inner.deserialize(topic, data);
        } catch (RuntimeException e) {
          throw data == null ? e : new Undecodable(data, e);
        }
      }

      @Override
      public V deserialize(String topic, Headers headers, byte[] data) {
        try {
          return inner.deserialize(topic, headers, data);
        } catch (RuntimeException e) {
          throw data == null ? e : new Undecodable(data, e);
        }
      }

      @Override
      public void configure(java.util.Map<String, ?> configs, boolean isKey) {
        inner.configure(configs, isKey);
      }

      @Override
      public void close() {
        inner.close();
      }
    };
    return Serdes.serdeFrom(serde.serializer(), outer);
  }

  /**
   * The record to write to the rejected topic for an entry of {@code store} that does not decode: key
   * {@code owner} (the user or conversation, so it can be found), value the stored bytes, headers with the reason
   * ({@link RejectedHeaders}: exception, message, code, store and store key).
   */
  public static Record<byte[], byte[]> rejected(String store, byte[] storeKey, String owner, Undecodable e,
      long timestamp) {
    RecordHeaders headers = new RecordHeaders();
    Throwable cause = e.getCause() != null ? e.getCause() : e;
    RejectedHeaders.add(headers, RejectedHeaders.EXCEPTION, cause.getClass().getName());
    RejectedHeaders.add(headers, RejectedHeaders.MESSAGE, "stored entry of " + store
        + " does not decode; removed from the store: " + cause.getMessage());
    RejectedHeaders.add(headers, RejectedHeaders.CODE, UNDECODABLE);
    RejectedHeaders.add(headers, RejectedHeaders.STORE, store);
    headers.add(RejectedHeaders.STORE_KEY, storeKey);
    return new Record<>(owner == null ? null : owner.getBytes(StandardCharsets.UTF_8), e.stored(), timestamp,
        headers);
  }
}
