package dev.impipe.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonMetaSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.NonValidationKeyword;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** The WebSocket frames of docs/api/asyncapi.yaml: a frame checked against the schema of its {@code type}. */
final class AsyncApiFrames {

  static final Path DEFAULT = Path.of("..", "docs", "api", "asyncapi.yaml");

  /** Frame type to its payload schema in the document. */
  private static final Map<String, String> SCHEMAS = Map.ofEntries(Map.entry("entry", "EntryFrame"),
      Map.entry("synced", "SyncedFrame"), Map.entry("sent", "SentFrame"), Map.entry("error", "ErrorFrame"),
      Map.entry("resync", "ResyncFrame"), Map.entry("redirect", "RedirectFrame"), Map.entry("pong", "PongFrame"),
      Map.entry("ack", "AckFrame"), Map.entry("send", "SendFrame"), Map.entry("ping", "PingFrame"));

  /** JSON Schema 2020-12 (AsyncAPI's schemas here use no keyword whose meaning differs from it). */
  private static final JsonMetaSchema DIALECT = JsonMetaSchema.builder(JsonMetaSchema.getV202012())
      .keywords(Stream.of("asyncapi", "info", "servers", "defaultContentType", "channels", "operations", "components")
          .map(NonValidationKeyword::new).toList())
      .build();
  private static final JsonSchemaFactory FACTORY = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012,
      b -> b.metaSchema(DIALECT).defaultMetaSchemaIri(DIALECT.getIri()));

  private final Path file;

  AsyncApiFrames(Path file) {
    this.file = file.toAbsolutePath().normalize();
  }

  /** What is wrong with {@code frame} as the frame its {@code type} names (an unknown type is wrong too). */
  List<String> check(JsonNode frame) {
    String schema = SCHEMAS.get(frame.path("type").asText());
    if (schema == null) {
      return List.of("undocumented frame type '" + frame.path("type").asText() + "'");
    }
    return FACTORY.getSchema(SchemaLocation.of(file.toUri() + "#/components/schemas/" + schema)).validate(frame)
        .stream().map(ValidationMessage::getMessage).toList();
  }
}
