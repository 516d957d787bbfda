package dev.impipe.schemas.registry;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Picks the client for a registry URL: {@code mock://...} in memory, anything else over HTTP. */
public final class SchemaRegistryClients {

  /** Serde config key, as in Confluent's serdes. */
  public static final String URL_CONFIG = "schema.registry.url";

  private static final Map<String, SchemaRegistryClient> SHARED = new ConcurrentHashMap<>();

  private SchemaRegistryClients() {}

  /**
   * A new client with an empty cache ({@code mock://} URLs still share their scope). For a process that may meet
   * different registries behind the same URL over its life (local mode restarting its embedded registry).
   */
  public static SchemaRegistryClient create(String url) {
    return create(url, RegistryClientSettings.NONE);
  }

  /** As {@link #create(String)}, authenticating and trusting as {@code settings} say (ignored for mock://). */
  public static SchemaRegistryClient create(String url, RegistryClientSettings settings) {
    if (url == null || url.isBlank()) {
      throw new SchemaRegistryException("No schema registry URL configured (" + URL_CONFIG + ")");
    }
    String trimmed = url.trim();
    return trimmed.startsWith("mock://") ? InMemorySchemaRegistry.forScope(trimmed)
        : new RestSchemaRegistryClient(trimmed, settings);
  }

  /** A client for {@code url}, shared per URL so all serdes of a process share one cache. */
  public static SchemaRegistryClient forUrl(String url) {
    if (url == null || url.isBlank()) {
      throw new SchemaRegistryException("No schema registry URL configured (" + URL_CONFIG + ")");
    }
    String trimmed = url.trim();
    if (trimmed.startsWith("mock://")) {
      return InMemorySchemaRegistry.forScope(trimmed);
    }
    return SHARED.computeIfAbsent(trimmed, RestSchemaRegistryClient::new);
  }
}
