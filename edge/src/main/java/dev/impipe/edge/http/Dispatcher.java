package dev.impipe.edge.http;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs a matched route's handler: builds the {@link Request} the handler sees (the router's normal path, decoded
 * path variables and query, lower-case headers, the body, a verified forwarding marker or none), admits it (guards,
 * token) and runs the handler where its kind says, then answers on the connection's event loop.
 */
final class Dispatcher {

  private static final String MARKER = ForwardMarker.HEADER.toLowerCase(Locale.ROOT);

  private final ForwardMarker marker;
  private final BearerAuth auth;
  private final Answers answers;
  private final Executor workers;
  private final Executor system;

  Dispatcher(ForwardMarker marker, BearerAuth auth, Answers answers, Executor workers, Executor system) {
    this.marker = marker;
    this.auth = auth;
    this.answers = answers;
    this.workers = workers;
    this.system = system;
  }

  void dispatch(RoutingContext rc, String method, HttpApi.AsyncHandler handler, RouteKind kind) {
    HttpServerRequest req = rc.request();
    Context ctx = Vertx.currentContext();
    String path = rc.normalizedPath();
    Map<String, String> query;
    try {
      query = query(rc);
    } catch (HttpError e) {
      answers.respond(req, ctx, Failures.toResponse(method, path, e));
      return;
    }
    Map<String, String> headers = headers(req);
    Buffer buffer = rc.body().buffer();
    byte[] body = buffer == null ? new byte[0] : buffer.getBytes();
    OptionalLong forwarded = marker.verify(headers.get(MARKER), method, req.uri(), headers.get("authorization"), body,
        System.currentTimeMillis());
    // Handlers see only a verified marker; a client-sent one is dropped here.
    headers.remove(MARKER);
    Request request = new Request(method, path, Map.copyOf(rc.pathParams()), query, headers, body, req.uri(), null,
        forwarded);
    Runnable work = () -> {
      CompletionStage<Response> stage;
      try {
        stage = handler.handle(auth.admit(kind, request));
      } catch (Throwable e) {
        stage = CompletableFuture.failedFuture(e);
      }
      stage.whenComplete((response, failure) -> answers.respond(req, ctx,
          failure == null ? response : Failures.toResponse(method, path, failure)));
    };
    if (kind == RouteKind.PROBE) {
      work.run();
      return;
    }
    try {
      (kind == RouteKind.SYSTEM ? system : workers).execute(work);
    } catch (RejectedExecutionException e) {
      answers.respond(req, ctx, Failures.toResponse(method, path, Failures.busy()));
    }
  }

  /** Header names in lower case, the first value of each; without a client-sent forwarding marker. */
  static Map<String, String> headers(HttpServerRequest req) {
    Map<String, String> headers = new HashMap<>();
    req.headers().forEach(h -> headers.putIfAbsent(h.getKey().toLowerCase(Locale.ROOT), h.getValue()));
    return headers;
  }

  /** The decoded query, the first value of each name; 400 when it cannot be decoded. */
  static Map<String, String> query(RoutingContext rc) {
    Map<String, String> query = new HashMap<>();
    try {
      rc.queryParams().forEach(e -> query.putIfAbsent(e.getKey(), e.getValue()));
    } catch (RuntimeException e) {
      throw HttpError.badRequest("malformed query string");
    }
    return query;
  }
}
