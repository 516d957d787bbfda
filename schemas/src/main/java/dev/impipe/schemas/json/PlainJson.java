package dev.impipe.schemas.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;

/**
 * Plain JSON for Avro records, as a shell user writes it: field names as in the schema, optional fields
 * may be omitted, nullable values without Avro's union wrappers, times as epoch millis (ISO-8601 also
 * accepted on input), bytes as base64.
 */
public final class PlainJson {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private PlainJson() {}

  /** Parses {@code json} into an instance of {@code type}; the message of the exception names the field. */
  public static <T extends SpecificRecord> T fromJson(JsonNode json, Class<T> type) {
    Schema schema = SpecificData.get().getSchema(type);
    Object generic = toAvro(schema, json, "");
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
      new GenericDatumWriter<Object>(schema).write(generic, encoder);
      encoder.flush();
      return new SpecificDatumReader<T>(type).read(null,
          DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
    } catch (IOException e) {
      throw new IllegalArgumentException("Cannot build " + type.getSimpleName() + ": " + e.getMessage(), e);
    }
  }

  /** Parses a JSON text into an instance of {@code type}. */
  public static <T extends SpecificRecord> T fromJson(String json, Class<T> type) {
    try {
      return fromJson(MAPPER.readTree(json), type);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException("Malformed JSON: " + e.getOriginalMessage(), e);
    }
  }

  /** The plain JSON form of a record. */
  public static ObjectNode toJson(SpecificRecord record) {
    return (ObjectNode) fromAvro(record.getSchema(), record);
  }

  private static Object toAvro(Schema schema, JsonNode node, String path) {
    switch (schema.getType()) {
      case RECORD : {
        if (node == null || !node.isObject()) {
          throw invalid(path, "an object", node);
        }
        GenericData.Record record = new GenericData.Record(schema);
        for (Iterator<String> names = node.fieldNames(); names.hasNext();) {
          String name = names.next();
          if (schema.getField(name) == null) {
            throw new IllegalArgumentException("Unknown field '" + join(path, name) + "' for "
                + schema.getName());
          }
        }
        for (Schema.Field field : schema.getFields()) {
          JsonNode value = node.get(field.name());
          String fieldPath = join(path, field.name());
          if (value == null) {
            if (!field.hasDefaultValue()) {
              throw new IllegalArgumentException("Missing required field '" + fieldPath + "'");
            }
            record.put(field.pos(), GenericData.get().deepCopy(field.schema(),
                GenericData.get().getDefaultValue(field)));
          } else {
            record.put(field.pos(), toAvro(field.schema(), value, fieldPath));
          }
        }
        return record;
      }
      case UNION : {
        if (node == null || node.isNull()) {
          if (schema.getTypes().stream().anyMatch(s -> s.getType() == Schema.Type.NULL)) {
            return null;
          }
          throw invalid(path, "a value", node);
        }
        IllegalArgumentException last = null;
        for (Schema branch : schema.getTypes()) {
          if (branch.getType() == Schema.Type.NULL) {
            continue;
          }
          try {
            return toAvro(branch, node, path);
          } catch (IllegalArgumentException e) {
            last = e;
          }
        }
        throw last != null ? last : invalid(path, "a value", node);
      }
      case NULL :
        if (node != null && !node.isNull()) {
          throw invalid(path, "null", node);
        }
        return null;
      case STRING :
        if (node == null || !node.isTextual()) {
          throw invalid(path, "a string", node);
        }
        return node.asText();
      case BOOLEAN :
        if (node == null || !node.isBoolean()) {
          throw invalid(path, "true or false", node);
        }
        return node.booleanValue();
      case INT :
        if (node == null || !node.canConvertToInt() || !node.isIntegralNumber()) {
          throw invalid(path, "an integer", node);
        }
        return node.intValue();
      case LONG :
        return toLong(schema, node, path);
      case FLOAT :
      case DOUBLE :
        if (node == null || !node.isNumber()) {
          throw invalid(path, "a number", node);
        }
        return schema.getType() == Schema.Type.FLOAT ? (Object) node.floatValue() : (Object) node.doubleValue();
      case ENUM :
        // The default symbol of a growable enum (UNKNOWN) is what a reader makes of a symbol it does not know;
        // nobody writes it on purpose.
        List<String> writable = schema.getEnumSymbols().stream()
            .filter(symbol -> !symbol.equals(schema.getEnumDefault())).toList();
        if (node == null || !node.isTextual() || !writable.contains(node.asText())) {
          throw invalid(path, "one of " + writable, node);
        }
        return new GenericData.EnumSymbol(schema, node.asText());
      case BYTES :
        if (node == null || !node.isTextual()) {
          throw invalid(path, "a base64 string", node);
        }
        try {
          return ByteBuffer.wrap(Base64.getDecoder().decode(node.asText()));
        } catch (IllegalArgumentException e) {
          throw invalid(path, "a base64 string", node);
        }
      case MAP : {
        if (node == null || !node.isObject()) {
          throw invalid(path, "an object", node);
        }
        Map<String, Object> map = new LinkedHashMap<>();
        node.fields().forEachRemaining(
            e -> map.put(e.getKey(), toAvro(schema.getValueType(), e.getValue(), join(path, e.getKey()))));
        return map;
      }
      case ARRAY : {
        if (node == null || !node.isArray()) {
          throw invalid(path, "an array", node);
        }
        List<Object> list = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
          list.add(toAvro(schema.getElementType(), node.get(i), path + "[" + i + "]"));
        }
        return list;
      }
      default :
        throw new IllegalArgumentException("Unsupported schema type " + schema.getType() + " at '" + path + "'");
    }
  }

  private static long toLong(Schema schema, JsonNode node, String path) {
    boolean isTime = schema.getLogicalType() instanceof LogicalTypes.TimestampMillis;
    if (node != null && node.isIntegralNumber() && node.canConvertToLong()) {
      return node.longValue();
    }
    if (isTime && node != null && node.isTextual()) {
      try {
        return Instant.parse(node.asText()).toEpochMilli();
      } catch (DateTimeParseException e) {
        throw invalid(path, "epoch milliseconds or an ISO-8601 instant", node);
      }
    }
    throw invalid(path, isTime ? "epoch milliseconds or an ISO-8601 instant" : "an integer", node);
  }

  private static JsonNode fromAvro(Schema schema, Object value) {
    if (value == null) {
      return NODES.nullNode();
    }
    switch (schema.getType()) {
      case RECORD : {
        ObjectNode out = NODES.objectNode();
        for (Schema.Field field : schema.getFields()) {
          Object fieldValue = value instanceof GenericRecord g ? g.get(field.pos())
              : ((SpecificRecord) value).get(field.pos());
          out.set(field.name(), fromAvro(field.schema(), fieldValue));
        }
        return out;
      }
      case UNION :
        for (Schema branch : schema.getTypes()) {
          if (branch.getType() != Schema.Type.NULL) {
            return fromAvro(branch, value);
          }
        }
        return NODES.nullNode();
      case LONG :
        if (value instanceof Instant instant) {
          return NODES.numberNode(instant.toEpochMilli());
        }
        return NODES.numberNode(((Number) value).longValue());
      case INT :
        return NODES.numberNode(((Number) value).intValue());
      case FLOAT :
      case DOUBLE :
        return NODES.numberNode(((Number) value).doubleValue());
      case BOOLEAN :
        return NODES.booleanNode((Boolean) value);
      case BYTES : {
        ByteBuffer buffer = ((ByteBuffer) value).duplicate();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return NODES.textNode(Base64.getEncoder().encodeToString(bytes));
      }
      case MAP : {
        ObjectNode out = NODES.objectNode();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
          out.set(e.getKey().toString(), fromAvro(schema.getValueType(), e.getValue()));
        }
        return out;
      }
      case ARRAY : {
        ArrayNode out = NODES.arrayNode();
        for (Object item : (Collection<?>) value) {
          out.add(fromAvro(schema.getElementType(), item));
        }
        return out;
      }
      default :
        return NODES.textNode(value.toString());
    }
  }

  private static IllegalArgumentException invalid(String path, String expected, JsonNode got) {
    return new IllegalArgumentException("Field '" + path + "' must be " + expected + ", got "
        + (got == null ? "nothing" : got.toString()));
  }

  private static String join(String path, String name) {
    return path.isEmpty() ? name : path + "." + name;
  }
}
