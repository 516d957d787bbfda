package dev.impipe.schemas.registry;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;

/**
 * A registry held in memory, for unit tests: URLs {@code mock://scope} share one instance per scope,
 * as Confluent's mock registry does.
 */
public final class InMemorySchemaRegistry implements SchemaRegistryClient {

  private static final Map<String, InMemorySchemaRegistry> SCOPES = new ConcurrentHashMap<>();

  private final String url;
  private final Map<Schema, Integer> idsBySchema = new HashMap<>();
  private final Map<Integer, Schema> schemasById = new HashMap<>();

  private InMemorySchemaRegistry(String url) {
    this.url = url;
  }

  /** The shared registry of a {@code mock://scope} URL. */
  public static InMemorySchemaRegistry forScope(String url) {
    return SCOPES.computeIfAbsent(url, InMemorySchemaRegistry::new);
  }

  /** Forgets a scope, so the next test starts empty. */
  public static void drop(String url) {
    SCOPES.remove(url);
  }

  @Override
  public synchronized int register(String subject, Schema schema) {
    return idsBySchema.computeIfAbsent(schema, s -> {
      int id = schemasById.size() + 1;
      schemasById.put(id, s);
      return id;
    });
  }

  @Override
  public synchronized Schema getById(int id) {
    Schema schema = schemasById.get(id);
    if (schema == null) {
      throw new SchemaRegistryException("Schema id " + id + " is not known to registry " + url);
    }
    return schema;
  }

  @Override
  public String url() {
    return url;
  }
}
