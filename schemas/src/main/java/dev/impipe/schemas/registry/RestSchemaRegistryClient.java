package dev.impipe.schemas.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;

/**
 * Client of the Confluent Schema Registry REST API ({@code POST /subjects/{s}/versions},
 * {@code GET /schemas/ids/{id}}), with caching both ways. Works with Confluent's registry and with
 * Apicurio's compatible API ({@code .../apis/ccompat/v7}).
 */
public final class RestSchemaRegistryClient implements SchemaRegistryClient {

  private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String baseUrl;
  /** {@link #baseUrl} without credentials: what requests go to and what messages name. */
  private final String endpoint;
  /** {@code Basic ...} from the URL's user info, or null. */
  private final String authorization;
  private final HttpClient http;
  private final Duration requestTimeout;
  private final Map<String, Map<Schema, Integer>> idsBySubject = new ConcurrentHashMap<>();
  private final Map<Integer, Schema> schemasById = new ConcurrentHashMap<>();

  public RestSchemaRegistryClient(String baseUrl) {
    this(baseUrl, Duration.ofSeconds(5), Duration.ofSeconds(15));
  }

  /**
   * A client for {@code baseUrl}. Credentials in the URL ({@code https://user:password@host/...}, Confluent's
   * {@code basic.auth.credentials.source=URL}) are sent as HTTP basic auth and never appear in messages; an
   * {@code https} URL uses the JVM's TLS settings ({@code javax.net.ssl.trustStore} for a private CA,
   * {@code javax.net.ssl.keyStore} for a client certificate).
   */
  public RestSchemaRegistryClient(String baseUrl, Duration connectTimeout, Duration requestTimeout) {
    this(baseUrl, RegistryClientSettings.NONE, connectTimeout, requestTimeout);
  }

  /** A client for {@code baseUrl} with basic auth and trust store from {@code settings}. */
  public RestSchemaRegistryClient(String baseUrl, RegistryClientSettings settings) {
    this(baseUrl, settings, Duration.ofSeconds(5), Duration.ofSeconds(15));
  }

  /**
   * A client for {@code baseUrl}: {@code settings}' basic auth replaces credentials in the URL, its trust store
   * replaces the JVM's for an {@code https} URL.
   */
  public RestSchemaRegistryClient(String baseUrl, RegistryClientSettings settings, Duration connectTimeout,
      Duration requestTimeout) {
    String given = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.baseUrl = given;
    this.requestTimeout = requestTimeout;
    HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(connectTimeout);
    settings.sslContext().ifPresent(builder::sslContext);
    this.http = builder.build();
    String userInfo = null;
    String endpoint = given;
    try {
      URI parsed = URI.create(given);
      userInfo = parsed.getRawUserInfo();
      if (userInfo != null) {
        endpoint = new URI(parsed.getScheme(), null, parsed.getHost(), parsed.getPort(), parsed.getRawPath(), null,
            null).toString();
      }
    } catch (IllegalArgumentException | java.net.URISyntaxException e) {
      // reported with the first request (uri())
    }
    this.endpoint = endpoint;
    String credentials = settings.basicAuthUserInfo().orElse(userInfo == null ? null
        : java.net.URLDecoder.decode(userInfo, StandardCharsets.UTF_8));
    this.authorization = credentials == null ? null : "Basic " + java.util.Base64.getEncoder().encodeToString(
        credentials.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  public int register(String subject, Schema schema) {
    Map<Schema, Integer> ids = idsBySubject.computeIfAbsent(subject, s -> new ConcurrentHashMap<>());
    Integer cached = ids.get(schema);
    if (cached != null) {
      return cached;
    }
    String body;
    try {
      body = JSON.writeValueAsString(Map.of("schema", schema.toString()));
    } catch (IOException e) {
      throw new SchemaRegistryException("Cannot encode schema for subject " + subject, e);
    }
    String path = "/subjects/" + URLEncoder.encode(subject, StandardCharsets.UTF_8) + "/versions";
    JsonNode reply = call(HttpRequest.newBuilder(uri(path))
        .POST(HttpRequest.BodyPublishers.ofString(body)), "register a schema under subject " + subject);
    JsonNode id = reply.get("id");
    if (id == null || !id.canConvertToInt()) {
      throw new SchemaRegistryException("Registry " + endpoint + " answered registration of subject " + subject
          + " without an id: " + reply);
    }
    int value = id.intValue();
    ids.put(schema, value);
    schemasById.putIfAbsent(value, schema);
    return value;
  }

  @Override
  public Schema getById(int id) {
    Schema cached = schemasById.get(id);
    if (cached != null) {
      return cached;
    }
    JsonNode reply = call(HttpRequest.newBuilder(uri("/schemas/ids/" + id)).GET(), "look up schema id " + id);
    JsonNode text = reply.get("schema");
    if (text == null || !text.isTextual()) {
      throw new SchemaRegistryException("Registry " + endpoint + " returned no schema for id " + id + ": " + reply);
    }
    Schema schema = new Schema.Parser().parse(text.asText());
    Schema raced = schemasById.putIfAbsent(id, schema);
    return raced != null ? raced : schema;
  }

  @Override
  public String url() {
    return baseUrl;
  }

  private URI uri(String path) {
    try {
      return URI.create(endpoint + path);
    } catch (IllegalArgumentException e) {
      throw new SchemaRegistryException("Invalid schema registry URL " + endpoint, e);
    }
  }

  private JsonNode call(HttpRequest.Builder request, String what) {
    request.timeout(requestTimeout)
        .header("Content-Type", CONTENT_TYPE)
        .header("Accept", CONTENT_TYPE + ", application/json");
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    HttpRequest built = request.build();
    HttpResponse<String> response;
    try {
      response = http.send(built, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new SchemaRegistryException("Schema registry " + endpoint + " is unreachable (" + what + "): " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SchemaRegistryException("Interrupted while trying to " + what + " at " + endpoint, e);
    }
    int status = response.statusCode();
    if (status == 404) {
      throw new SchemaRegistryException("Schema registry " + endpoint + " could not " + what
          + ": not found (" + response.body() + ")");
    }
    if (status / 100 != 2) {
      throw new SchemaRegistryException("Schema registry " + endpoint + " refused to " + what + ": HTTP "
          + status + " " + response.body());
    }
    try {
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new SchemaRegistryException("Schema registry " + endpoint + " sent an unreadable answer to " + what
          + ": " + response.body(), e);
    }
  }
}
