package dev.impipe.edge.http;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.type.LogicalType;

/** The JSON mappers of the HTTP layer. */
public final class Json {
  public static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * Reads request bodies into records ({@link Request#jsonBody}): an unknown field is an error, and a value is taken
   * only in its own JSON type (no {@code 7} for a string, no {@code "7"} or {@code 7.5} for a whole number).
   */
  static final ObjectMapper BODIES = JsonMapper.builder()
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
      .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
      .withCoercionConfig(LogicalType.Textual, strings -> strings
          .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
          .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
          .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
      .build();

  private Json() {}

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }
}
