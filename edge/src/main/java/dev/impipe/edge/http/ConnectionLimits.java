package dev.impipe.edge.http;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a connection may hold: a cap on open connections (more are closed at once), and a deadline for each request
 * head. Vert.x announces an HTTP/1 connection only once its first request head has been read, so the head deadline
 * starts after each answer (a kept-alive connection must send its next head in time); a client that goes silent
 * before its first head is closed by the idle timeout.
 */
final class ConnectionLimits {

  private static final class State {
    volatile long headerTimer = -1;
  }

  private final Vertx vertx;
  private final int maxConnections;
  private final long headerTimeoutMs;
  private final AtomicInteger open = new AtomicInteger();
  private final Map<HttpConnection, State> states = new ConcurrentHashMap<>();

  ConnectionLimits(Vertx vertx, int maxConnections, long headerTimeoutMs) {
    this.vertx = vertx;
    this.maxConnections = maxConnections;
    this.headerTimeoutMs = headerTimeoutMs;
  }

  void opened(HttpConnection conn) {
    if (open.incrementAndGet() > maxConnections) {
      open.decrementAndGet();
      conn.close();
      return;
    }
    State state = new State();
    states.put(conn, state);
    conn.closeHandler(v -> {
      open.decrementAndGet();
      State s = states.remove(conn);
      if (s != null && s.headerTimer >= 0) {
        vertx.cancelTimer(s.headerTimer);
      }
    });
  }

  /** A request head arrived on the connection: its deadline is met. */
  void headRead(HttpServerRequest req) {
    State state = states.get(req.connection());
    if (state != null && state.headerTimer >= 0) {
      vertx.cancelTimer(state.headerTimer);
      state.headerTimer = -1;
    }
  }

  /** An answer was written: the next head must arrive within the deadline, or the connection is closed. */
  void answered(HttpServerRequest req) {
    HttpConnection conn = req.connection();
    State state = states.get(conn);
    if (state != null) {
      state.headerTimer = vertx.setTimer(headerTimeoutMs, id -> {
        state.headerTimer = -1;
        conn.close();
      });
    }
  }

  int open() {
    return open.get();
  }
}
