package dev.impipe.edge.http;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/** What a handler answers. */
public record Response(int status, String contentType, byte[] body, Map<String, String> headers) {

  public static Response json(int status, Object value) {
    try {
      return new Response(status, "application/json", Json.MAPPER.writeValueAsBytes(value), Map.of());
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("Cannot encode response", e);
    }
  }

  /** A JSON body that is already encoded (written by a streaming generator). */
  public static Response json(int status, byte[] encoded) {
    return new Response(status, "application/json", encoded, Map.of());
  }

  public static Response text(int status, String contentType, String body) {
    return new Response(status, contentType, body.getBytes(StandardCharsets.UTF_8), Map.of());
  }

  public static Response empty(int status) {
    return new Response(status, "application/json", new byte[0], Map.of());
  }

  /** The same response without {@code name} (a marker used inside the process only). */
  public Response withoutHeader(String name) {
    if (!headers.containsKey(name)) {
      return this;
    }
    Map<String, String> all = new java.util.HashMap<>(headers);
    all.remove(name);
    return new Response(status, contentType, body, all);
  }

  public Response withHeader(String name, String value) {
    Map<String, String> all = new java.util.HashMap<>(headers);
    all.put(name, value);
    return new Response(status, contentType, body, all);
  }
}
