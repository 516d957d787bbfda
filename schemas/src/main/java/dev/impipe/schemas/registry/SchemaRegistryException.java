package dev.impipe.schemas.registry;

/** A registry call failed: unreachable, refused, or an unknown schema id. The message names the URL / id. */
public class SchemaRegistryException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public SchemaRegistryException(String message) {
    super(message);
  }

  public SchemaRegistryException(String message, Throwable cause) {
    super(message, cause);
  }
}
