package dev.impipe.edge.http;

import io.vertx.core.Context;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * WebSocket upgrades at exact paths: the token is verified and the handler asked on a worker before the upgrade; a
 * refusal is answered as plain HTTP and the connection closed, with no upgrade.
 */
final class SocketUpgrades {

  private static final Logger LOG = LoggerFactory.getLogger(SocketUpgrades.class);

  private record SocketRoute(String path, HttpApi.WebSocketHandler handler) {}

  private final List<SocketRoute> routes = new CopyOnWriteArrayList<>();
  private final BearerAuth auth;
  private final Answers answers;
  private final Executor workers;

  SocketUpgrades(BearerAuth auth, Answers answers, Executor workers) {
    this.auth = auth;
    this.answers = answers;
    this.workers = workers;
  }

  void add(String path, HttpApi.WebSocketHandler handler) {
    routes.add(new SocketRoute(path, handler));
  }

  List<String> paths() {
    return routes.stream().map(SocketRoute::path).toList();
  }

  /** Takes over {@code rc} when it asks to upgrade at a served path (true), else leaves it to the router. */
  boolean take(RoutingContext rc, Context ctx, String path) {
    HttpServerRequest req = rc.request();
    if (routes.isEmpty() || !"GET".equals(req.method().name())
        || !"websocket".equalsIgnoreCase(String.valueOf(req.getHeader("Upgrade")))) {
      return false;
    }
    for (SocketRoute route : routes) {
      if (route.path().equals(path)) {
        upgrade(rc, ctx, route, path);
        return true;
      }
    }
    return false;
  }

  private void upgrade(RoutingContext rc, Context ctx, SocketRoute route, String path) {
    HttpServerRequest req = rc.request();
    req.pause();
    Map<String, String> headers = Dispatcher.headers(req);
    headers.remove(ForwardMarker.HEADER.toLowerCase(java.util.Locale.ROOT));
    Map<String, String> query;
    try {
      query = Dispatcher.query(rc);
    } catch (HttpError e) {
      answers.respondAndClose(req, ctx, Failures.error(e.status(), e.getMessage()));
      return;
    }
    Request request = new Request("GET", path, Map.of(), query, headers, new byte[0], req.uri(), null,
        OptionalLong.empty());
    try {
      workers.execute(() -> {
        Consumer<ServerWebSocket> open;
        try {
          open = route.handler().accept(auth.admitUpgrade(request));
        } catch (Throwable e) {
          answers.respondAndClose(req, ctx, Failures.toResponse("GET", path, e));
          return;
        }
        ctx.runOnContext(v -> req.toWebSocket().onComplete(ws -> {
          if (ws.succeeded()) {
            open.accept(ws.result());
          } else {
            LOG.debug("WebSocket upgrade of {} failed: {}", req.path(), ws.cause().toString());
          }
        }));
      });
    } catch (RejectedExecutionException e) {
      answers.respondAndClose(req, ctx, Failures.toResponse("GET", path, Failures.busy()));
    }
  }
}
