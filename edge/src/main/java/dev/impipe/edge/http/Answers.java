package dev.impipe.edge.http;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes answers on the connection's event loop. An answer the client has not read within the write timeout closes
 * its connection (it does not read, and what was buffered for it is freed); a pipelined request whose earlier answer
 * is still unread gets no second one.
 */
final class Answers {

  private static final Logger LOG = LoggerFactory.getLogger(Answers.class);
  private static final long CLOSE_GRACE_MS = 2_000;

  private final Vertx vertx;
  private final long writeTimeoutMs;
  private final ConnectionLimits connections;

  Answers(Vertx vertx, long writeTimeoutMs, ConnectionLimits connections) {
    this.vertx = vertx;
    this.writeTimeoutMs = writeTimeoutMs;
    this.connections = connections;
  }

  void respond(HttpServerRequest req, Context ctx, Response response) {
    ctx.runOnContext(v -> {
      if (req.response().ended() || req.response().closed()) {
        return;
      }
      if (req.response().writeQueueFull()) {
        // An earlier answer on this connection (pipelined requests) is still unread: the client is not reading,
        // and it gets no second answer to hold in memory for it.
        LOG.debug("{} {}: previous answer still unread, connection closed", req.method(), req.path());
        drop(req.connection());
        return;
      }
      write(req, response);
      connections.answered(req);
    });
  }

  /** Answers once the (small or absent) body has been read and discarded. */
  void drainThenRespond(HttpServerRequest req, Context ctx, Response response) {
    if (req.isEnded()) {
      respond(req, ctx, response);
    } else {
      req.handler(b -> {});
      req.endHandler(v -> respond(req, ctx, response));
      req.exceptionHandler(e -> {});
      req.resume();
    }
  }

  /**
   * Answers and ends the connection. The rest of the body (if any) is discarded for a short grace period first:
   * closing with unread data makes the client's TCP stack reset the connection, and the client may then never read
   * the answer.
   */
  void respondAndClose(HttpServerRequest req, Context ctx, Response response) {
    ctx.runOnContext(v -> {
      if (req.response().ended() || req.response().closed()) {
        return;
      }
      write(req, response.withHeader("Connection", "close"));
      if (req.isEnded()) {
        req.connection().close();
        return;
      }
      long grace = vertx.setTimer(CLOSE_GRACE_MS, id -> req.connection().close());
      req.handler(discard -> {});
      req.endHandler(end -> {
        vertx.cancelTimer(grace);
        req.connection().close();
      });
      req.exceptionHandler(e -> vertx.cancelTimer(grace));
      req.resume();
    });
  }

  private void write(HttpServerRequest req, Response response) {
    var out = req.response().setStatusCode(response.status());
    response.headers().forEach(out::putHeader);
    out.putHeader("Content-Type", response.contentType());
    HttpConnection conn = req.connection();
    long timer = vertx.setTimer(writeTimeoutMs, id -> {
      LOG.debug("{} {}: answer not read within {} ms, connection closed", req.method(), req.path(),
          writeTimeoutMs);
      drop(conn);
    });
    out.end(Buffer.buffer(response.body())).onComplete(done -> vertx.cancelTimer(timer));
  }

  /**
   * Closes {@code conn} now, discarding what is still queued for the client. Vert.x's own close (and a close sent
   * through the whole pipeline, which Vert.x's handler intercepts) is graceful: it waits behind the unwritten
   * answer, which a client that does not read never takes. Closing from Vert.x's handler context outwards skips it.
   */
  private static void drop(HttpConnection conn) {
    if (conn instanceof io.vertx.core.net.impl.ConnectionBase base) {
      base.channelHandlerContext().close();
    } else {
      conn.close();
    }
  }
}
