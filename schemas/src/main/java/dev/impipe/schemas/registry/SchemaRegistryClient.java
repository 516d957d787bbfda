package dev.impipe.schemas.registry;

import org.apache.avro.Schema;

/** The part of the Confluent Schema Registry API the serdes need. Implementations cache. */
public interface SchemaRegistryClient {

  /** Registers {@code schema} under {@code subject} (idempotent) and returns its global id. */
  int register(String subject, Schema schema);

  /** The schema with global id {@code id}; throws {@link SchemaRegistryException} when unknown. */
  Schema getById(int id);

  /** Where this client talks to, for messages. */
  String url();

  /** TopicNameStrategy: {@code <topic>-key} or {@code <topic>-value}. */
  static String subject(String topic, boolean isKey) {
    return topic + (isKey ? "-key" : "-value");
  }
}
