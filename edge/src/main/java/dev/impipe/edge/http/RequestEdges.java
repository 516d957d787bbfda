package dev.impipe.edge.http;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;

/**
 * The router's handlers around the routes: the first one every request meets (head deadline met, one normal form
 * of the path, malformed heads refused, WebSocket upgrades taken), the body deadline, the answers for unmatched
 * requests (404/405) and for failures while routing, reading the body or waiting for the handler.
 */
final class RequestEdges {

  private final Vertx vertx;
  private final HttpSettings settings;
  private final ConnectionLimits connections;
  private final Answers answers;
  private final SocketUpgrades sockets;

  RequestEdges(Vertx vertx, HttpSettings settings, ConnectionLimits connections, Answers answers,
      SocketUpgrades sockets) {
    this.vertx = vertx;
    this.settings = settings;
    this.connections = connections;
    this.answers = answers;
    this.sockets = sockets;
  }

  /** First for every request: the head deadline is met; one normal form of the path; WebSocket upgrades. */
  void onRequest(RoutingContext rc) {
    HttpServerRequest req = rc.request();
    connections.headRead(req);
    Context ctx = Vertx.currentContext();
    String path = RequestPaths.normalise(req.path());
    if (path == null) {
      answers.respondAndClose(req, ctx, Failures.error(400, "a path may not contain '.' or '..' segments"));
      return;
    }
    if (!RequestPaths.wellEncoded(path)) {
      answers.respondAndClose(req, ctx, Failures.error(400, "malformed percent-encoding in the path"));
      return;
    }
    // A body larger than allowed is refused from its declared length, before a byte of it is read, whatever the
    // path (BodyHandler does the same on matched routes, and counts a chunked body).
    String length = req.getHeader("Content-Length");
    if (length != null) {
      long declared;
      try {
        declared = Long.parseLong(length.trim());
      } catch (NumberFormatException e) {
        answers.respondAndClose(req, ctx, Failures.error(400, "invalid Content-Length"));
        return;
      }
      if (declared > settings.maxBodyBytes()) {
        answers.respondAndClose(req, ctx, Failures.error(413, "request body larger than " + settings.maxBodyBytes()
            + " bytes"));
        return;
      }
    }
    if (!sockets.take(rc, ctx, rc.normalizedPath())) {
      rc.next();
    }
  }

  /** A body not received within its deadline is answered 408 and the connection closed. */
  void bodyDeadline(RoutingContext rc) {
    HttpServerRequest req = rc.request();
    Context ctx = Vertx.currentContext();
    long timer = vertx.setTimer(settings.bodyTimeoutMs(), id -> {
      if (!req.isEnded()) {
        answers.respondAndClose(req, ctx, Failures.error(408, "request body not received within "
            + settings.bodyTimeoutMs() + " ms"));
      }
    });
    rc.addEndHandler(v -> vertx.cancelTimer(timer));
    rc.next();
  }

  /** No route for the path (404, or 503 while routes are still being added), or not for the method (405). */
  void unmatched(RoutingContext rc, Response error) {
    HttpServerRequest req = rc.request();
    String length = req.getHeader("Content-Length");
    if (req.isEnded() || "0".equals(length) || length == null && !req.headers().contains("Transfer-Encoding")) {
      answers.drainThenRespond(req, Vertx.currentContext(), error);
    } else {
      answers.respondAndClose(req, Vertx.currentContext(), error); // no reason to read a body nobody will handle
    }
  }

  /** What failed while routing, reading the body or waiting for the handler. */
  void onFailure(RoutingContext rc) {
    HttpServerRequest req = rc.request();
    Context ctx = Vertx.currentContext();
    int status = rc.statusCode();
    if (rc.failure() instanceof HttpClosedException || req.response().closed()) {
      return; // the client went away while its body was read: nobody to answer
    }
    if (rc.failure() != null) {
      answers.respond(req, ctx, Failures.toResponse(req.method().name(), rc.normalizedPath(), rc.failure()));
    } else if (status == 413) {
      answers.respondAndClose(req, ctx, Failures.error(413, "request body larger than " + settings.maxBodyBytes()
          + " bytes"));
    } else if (status == 503) {
      answers.respond(req, ctx, Failures.error(503, "request not answered within " + settings.requestTimeoutMs()
          + " ms, retry").withHeader("Retry-After", Failures.RETRY_AFTER));
    } else {
      answers.respondAndClose(req, ctx, Failures.error(status, status < 500 ? "bad request" : "internal error"));
    }
  }
}
