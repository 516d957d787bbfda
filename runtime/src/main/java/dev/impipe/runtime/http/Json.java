package dev.impipe.runtime.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The one JSON mapper of the HTTP layer. */
public final class Json {
  public static final ObjectMapper MAPPER = new ObjectMapper();

  private Json() {}

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }
}
