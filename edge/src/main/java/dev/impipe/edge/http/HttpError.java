package dev.impipe.edge.http;

import java.util.Map;

/** Ends a request with a status and {@code {"error": message}}; thrown from handlers. */
public class HttpError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;
  private final Map<String, String> headers;

  public HttpError(int status, String message) {
    this(status, message, Map.of());
  }

  public HttpError(int status, String message, Map<String, String> headers) {
    super(message);
    this.status = status;
    this.headers = Map.copyOf(headers);
  }

  public static HttpError badRequest(String message) {
    return new HttpError(400, message);
  }

  /** 401 with the {@code WWW-Authenticate: Bearer} challenge. */
  public static HttpError unauthorized(String message) {
    return new HttpError(401, message, Map.of("WWW-Authenticate",
        "Bearer realm=\"im\", error=\"invalid_token\", error_description=\"" + message.replace("\"", "'") + "\""));
  }

  /** 403: the token is valid but does not allow this. */
  public static HttpError forbidden(String message) {
    return new HttpError(403, message);
  }

  /** 503 with {@code Retry-After} (seconds). */
  public static HttpError unavailable(String message, int retryAfterSeconds) {
    return new HttpError(503, message, Map.of("Retry-After", Integer.toString(retryAfterSeconds)));
  }

  public int status() {
    return status;
  }

  public Map<String, String> headers() {
    return headers;
  }
}
