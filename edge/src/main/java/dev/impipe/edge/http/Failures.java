package dev.impipe.edge.http;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns what a handler threw into the answer: an {@link HttpError} with its status, message and headers (a 5xx
 * message cut to what {@link ErrorBodies} lets out, the whole of it logged under a correlation id); anything else a
 * 500 that answers only a correlation id, the detail going to the log.
 */
final class Failures {

  private static final Logger LOG = LoggerFactory.getLogger(Failures.class);
  static final String RETRY_AFTER = "1";

  private Failures() {}

  /** {@code {"error": message}} with {@code status}. */
  static Response error(int status, String message) {
    return Response.json(status, Map.of("error", message == null ? "error" : message));
  }

  /** The work queue is full: 503 + {@code Retry-After}. */
  static HttpError busy() {
    return new HttpError(503, "server busy, retry", Map.of("Retry-After", RETRY_AFTER));
  }

  /** The answer to {@code failure} (unwrapped from completion wrappers) of the request {@code method path}. */
  static Response toResponse(String method, String path, Throwable failure) {
    Throwable e = unwrap(failure);
    if (e instanceof HttpError http) {
      Response response;
      if (ErrorBodies.redacted(http.status(), http.getMessage())) {
        // Internal detail (stores, partitions, offsets, exception text) stays in the log.
        String id = UUID.randomUUID().toString();
        LOG.info("{} {} answered {} (correlation id {}): {}", method, path, http.status(), id, http.getMessage());
        response = Response.json(http.status(), Map.of("error", ErrorBodies.publicMessage(http.status(),
            http.getMessage()), "correlationId", id)).withHeader("X-Correlation-Id", id);
      } else {
        response = error(http.status(), http.getMessage());
      }
      for (Map.Entry<String, String> h : http.headers().entrySet()) {
        response = response.withHeader(h.getKey(), h.getValue());
      }
      return response;
    }
    String id = UUID.randomUUID().toString();
    LOG.warn("{} {} failed (correlation id {})", method, path, id, e);
    return Response.json(500, Map.of("error", "internal error", "correlationId", id))
        .withHeader("X-Correlation-Id", id);
  }

  static Throwable unwrap(Throwable failure) {
    Throwable e = failure;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
