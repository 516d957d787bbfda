package dev.impipe.runtime.http;

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

  public static HttpError notFound(String message) {
    return new HttpError(404, message);
  }

  public int status() {
    return status;
  }

  public Map<String, String> headers() {
    return headers;
  }
}
