package dev.impipe.edge.http;

import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import dev.impipe.edge.auth.Principal;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * An HTTP request as handlers see it.
 *
 * @param rawUri path and query exactly as received (what a forwarding marker is signed over)
 * @param principal who the verified bearer token names; null only on routes that need no token
 * @param forwardedBudgetMs set when the request carries a valid forwarding marker from another instance: the time
 *     budget it has left
 */
public record Request(String method, String path, Map<String, String> pathParams, Map<String, String> query,
    Map<String, String> headers, byte[] body, String rawUri, Principal principal, OptionalLong forwardedBudgetMs) {

  /** A request made inside this process (no token, not forwarded). */
  public Request(String method, String path, Map<String, String> pathParams, Map<String, String> query,
      Map<String, String> headers, byte[] body) {
    this(method, path, pathParams, query, headers, body, path, null, OptionalLong.empty());
  }

  /** The caller; 401 when the route was reached without a verified token. */
  public Principal caller() {
    if (principal == null) {
      throw HttpError.unauthorized("a bearer token is required");
    }
    return principal;
  }

  /** True when another instance forwarded this request with a valid marker. */
  public boolean forwarded() {
    return forwardedBudgetMs.isPresent();
  }

  /** The same request acting as {@code newPrincipal} (set once its token is verified). */
  public Request withPrincipal(Principal newPrincipal) {
    return new Request(method, path, pathParams, query, headers, body, rawUri, newPrincipal, forwardedBudgetMs);
  }

  /** A path variable of the route pattern ({@code {name}}). */
  public String path(String name) {
    return pathParams.get(name);
  }

  public Optional<String> query(String name) {
    String value = query.get(name);
    return value == null || value.isEmpty() ? Optional.empty() : Optional.of(value);
  }

  /** An integer query parameter within bounds; 400 naming the parameter otherwise. */
  public long longQuery(String name, long defaultValue, long min, long max) {
    Optional<String> raw = query(name);
    if (raw.isEmpty()) {
      return defaultValue;
    }
    long value;
    try {
      value = Long.parseLong(raw.get());
    } catch (NumberFormatException e) {
      throw HttpError.badRequest("query parameter '" + name + "' must be a whole number, got '" + raw.get() + "'");
    }
    if (value < min || value > max) {
      throw HttpError.badRequest("query parameter '" + name + "' must be between " + min + " and " + max
          + ", got " + value);
    }
    return value;
  }

  /** The body parsed as a JSON object; 400 when it is empty, malformed or not an object. */
  public JsonNode jsonObject() {
    if (body.length == 0) {
      throw HttpError.badRequest("request body must be a JSON object");
    }
    try {
      JsonNode node = Json.MAPPER.readTree(body);
      if (node == null || !node.isObject()) {
        throw HttpError.badRequest("request body must be a JSON object");
      }
      return node;
    } catch (IOException e) {
      throw HttpError.badRequest("malformed JSON body: " + firstLine(e.getMessage()));
    }
  }

  /**
   * The body, a JSON object, read into {@code type} (a record whose components are the allowed fields, all
   * optional); 400 {@code {"error": ...}} naming the field when one is unknown or not of its component's JSON type,
   * and as {@link #jsonObject()} when the body is not a JSON object.
   */
  public <T> T jsonBody(Class<T> type) {
    JsonNode node = jsonObject();
    try {
      return Json.BODIES.treeToValue(node, type);
    } catch (UnrecognizedPropertyException e) {
      throw HttpError.badRequest("unknown field '" + e.getPropertyName() + "'; allowed: " + String.join(", ",
          e.getKnownPropertyIds().stream().map(String::valueOf).sorted().toList()));
    } catch (JsonMappingException e) {
      // A value of another JSON type, or a number out of range: named by the field it was for.
      String field = e.getPath().isEmpty() ? null : e.getPath().get(0).getFieldName();
      throw HttpError.badRequest("'" + (field == null ? "body" : field) + "' must be "
          + expected(componentType(type, field)));
    } catch (IOException e) {
      throw HttpError.badRequest("unreadable JSON body: " + firstLine(e.getMessage()));
    }
  }

  private static Class<?> componentType(Class<?> record, String name) {
    if (record.isRecord()) {
      for (java.lang.reflect.RecordComponent c : record.getRecordComponents()) {
        if (c.getName().equals(name)) {
          return c.getType();
        }
      }
    }
    return null;
  }

  private static String expected(Class<?> type) {
    if (type == String.class) {
      return "a string";
    }
    if (type == Long.class || type == long.class || type == Integer.class || type == int.class) {
      return "a whole number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    return "a JSON " + (type == null ? "value" : type.getSimpleName());
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable";
    }
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }
}
