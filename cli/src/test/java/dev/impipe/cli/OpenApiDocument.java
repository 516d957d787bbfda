package dev.impipe.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.JsonMetaSchema;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.NonValidationKeyword;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import com.networknt.schema.oas.OpenApi31;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * docs/api/openapi.yaml as the tests read it: the operations it documents ({@code "METHOD /path"}, the form of
 * {@code HttpApi#routes()}) and a validator of a JSON body against the schema of a documented request or response
 * (OpenAPI 3.1 schemas are JSON Schema 2020-12; {@code $ref}s resolve within the document).
 */
final class OpenApiDocument {

  /** Where the description lives, from a module directory (Maven runs tests there). */
  static final Path DEFAULT = Path.of("..", "docs", "api", "openapi.yaml");

  private static final List<String> METHODS = List.of("get", "put", "post", "delete", "patch", "head", "options");
  /** OpenAPI 3.1's dialect; the document's own top-level fields are known words, not schema keywords to warn about. */
  private static final JsonMetaSchema DIALECT = JsonMetaSchema.builder(OpenApi31.getInstance())
      .keywords(Stream.of("openapi", "info", "jsonSchemaDialect", "servers", "webhooks", "security", "tags",
          "paths", "components", "externalDocs").map(NonValidationKeyword::new).toList())
      .build();
  private static final JsonSchemaFactory SCHEMAS = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012,
      b -> b.metaSchema(DIALECT).defaultMetaSchemaIri(DIALECT.getIri()));

  private final Path file;
  private final JsonNode root;

  private OpenApiDocument(Path file, JsonNode root) {
    this.file = file;
    this.root = root;
  }

  static OpenApiDocument read(Path file) {
    try {
      return new OpenApiDocument(file.toAbsolutePath().normalize(), new ObjectMapper(new YAMLFactory())
          .readTree(file.toFile()));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  JsonNode root() {
    return root;
  }

  /** Every documented operation as {@code "METHOD /path"}. */
  Set<String> operations() {
    Set<String> out = new TreeSet<>();
    for (Iterator<String> paths = root.path("paths").fieldNames(); paths.hasNext();) {
      String path = paths.next();
      for (String method : METHODS) {
        if (root.path("paths").path(path).has(method)) {
          out.add(method.toUpperCase(Locale.ROOT) + " " + path);
        }
      }
    }
    return out;
  }

  /**
   * What is wrong with {@code body} as the {@code status} answer of {@code method path} (empty: it matches); fails
   * when that answer is not documented or has no JSON schema.
   */
  List<String> checkResponse(String method, String path, int status, JsonNode body) {
    String pointer = "/paths/" + escape(path) + "/" + method.toLowerCase(Locale.ROOT) + "/responses/" + status;
    return check(pointer, body);
  }

  /** What is wrong with {@code body} as the request body of {@code method path} (empty: it matches). */
  List<String> checkRequest(String method, String path, JsonNode body) {
    return check("/paths/" + escape(path) + "/" + method.toLowerCase(Locale.ROOT) + "/requestBody", body);
  }

  private List<String> check(String pointer, JsonNode body) {
    String schemaPointer = schemaOf(pointer);
    JsonSchema schema = SCHEMAS.getSchema(SchemaLocation.of(file.toUri() + "#"
        + schemaPointer.replace("{", "%7B").replace("}", "%7D")));
    List<String> problems = new ArrayList<>();
    for (ValidationMessage m : schema.validate(body)) {
      problems.add(m.getMessage());
    }
    return problems;
  }

  /** The pointer of the component schema of a response or request body at {@code pointer} (refs followed). */
  String schemaOf(String pointer) {
    String at = pointer;
    JsonNode node = root.at(at);
    while (node.has("$ref")) {
      at = node.get("$ref").asText().substring(1);
      node = root.at(at);
    }
    if (node.isMissingNode()) {
      throw new AssertionError("not documented: " + pointer);
    }
    JsonNode schema = node.path("content").path("application/json").path("schema");
    if (schema.isMissingNode()) {
      throw new AssertionError("no application/json schema at " + at);
    }
    return schema.has("$ref") ? schema.get("$ref").asText().substring(1)
        : at + "/content/" + escape("application/json") + "/schema";
  }

  /** A JSON pointer token: {@code ~} and {@code /} escaped. */
  private static String escape(String token) {
    return token.replace("~", "~0").replace("/", "~1");
  }
}
