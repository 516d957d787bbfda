package dev.impipe.runtime.http;

import dev.impipe.runtime.auth.AuthException;
import dev.impipe.runtime.auth.Principal;
import dev.impipe.runtime.auth.TokenVerifier;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.PoolOptions;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JSON-over-HTTP server of a pipeline process, on Vert.x: an event loop accepts connections, reads requests and
 * writes answers; handlers run on a bounded worker pool (blocking store reads are fine there), and asynchronous
 * handlers ({@link #routeAsync}) may wait for Kafka or for a store to catch up without holding any thread.
 *
 * <p>What keeps one client from stalling the others: a cap on open connections, a deadline for the request head
 * and one for the body, bodies limited in bytes (413 from {@code Content-Length} before reading), a bounded work
 * queue (full: 503 + {@code Retry-After}), a deadline per request (503), and system routes ({@code /health},
 * {@code /metrics}) that never queue behind {@code /v1} work. Routes under the authenticated prefix need a valid
 * bearer token (401 + {@code WWW-Authenticate: Bearer} otherwise); a 500 answers only a correlation id, the detail
 * goes to the log.
 */
public final class HttpApi implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
  private static final String RETRY_AFTER = "1";
  private static final long CLOSE_GRACE_MS = 2_000;

  /** Handles one request on a worker thread; may block briefly (a store read), never for long. */
  @FunctionalInterface
  public interface Handler {
    Response handle(Request request) throws Exception;
  }

  /**
   * Handles one request asynchronously: called on a worker thread, it returns at once and completes the stage
   * later (a Kafka acknowledgement, a store catching up) without holding a thread while it waits.
   */
  @FunctionalInterface
  public interface AsyncHandler {
    CompletionStage<Response> handle(Request request) throws Exception;
  }

  /**
   * Accepts a WebSocket: called on a worker thread with the verified caller ({@link Request#caller()}) before the
   * upgrade; it may refuse by throwing an {@link HttpError} (answered as plain HTTP, no upgrade), or return what to
   * do with the socket once upgraded (called on the connection's event loop).
   */
  @FunctionalInterface
  public interface WebSocketHandler {
    java.util.function.Consumer<io.vertx.core.http.ServerWebSocket> accept(Request request) throws Exception;
  }

  private enum Kind { WORKER, SYSTEM, PROBE }

  private record SocketRoute(String path, WebSocketHandler handler) {}

  private record Route(String method, String[] segments, AsyncHandler handler, Kind kind) {}

  private record Guard(String prefix, java.util.function.Consumer<Request> check) {}

  private static final class ConnState {
    volatile long headerTimer = -1;
  }

  private final HttpSettings settings;
  private final List<Route> routes = new CopyOnWriteArrayList<>();
  private final List<SocketRoute> socketRoutes = new CopyOnWriteArrayList<>();
  private final List<Guard> guards = new CopyOnWriteArrayList<>();
  private final Vertx vertx;
  private final HttpServer server;
  private final HttpClient client;
  private final ThreadPoolExecutor workers;
  private final ExecutorService system;
  private final ForwardMarker marker;
  private final AtomicInteger connections = new AtomicInteger();
  private final Map<HttpConnection, ConnState> connStates = new ConcurrentHashMap<>();
  private volatile String authPrefix;
  private volatile TokenVerifier verifier;
  private volatile int boundPort = -1;
  /** False between {@link #routesPending()} and {@link #routesComplete()}: routes are still being added. */
  private volatile boolean routesComplete = true;

  public HttpApi(HttpSettings settings) {
    this.settings = settings;
    this.vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(2)
        .setBlockedThreadCheckInterval(10).setBlockedThreadCheckIntervalUnit(TimeUnit.SECONDS));
    AtomicInteger n = new AtomicInteger();
    this.workers = new ThreadPoolExecutor(settings.workers(), settings.workers(), 60, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(settings.queue()), r -> {
          Thread t = new Thread(r, "http-worker-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        }, new ThreadPoolExecutor.AbortPolicy());
    this.system = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "http-system");
      t.setDaemon(true);
      return t;
    });
    this.marker = new ForwardMarker(settings.clusterKey());
    HttpServerOptions options = new HttpServerOptions()
        .setHost(settings.host())
        .setPort(settings.port())
        .setTcpNoDelay(true)
        .setReuseAddress(true)
        // A connection waiting for its answer sends nothing: the idle timeout must outlast the request deadline.
        .setIdleTimeout((int) Math.max(settings.idleTimeoutMs(), settings.requestTimeoutMs() + 1_000))
        .setIdleTimeoutUnit(TimeUnit.MILLISECONDS)
        .setMaxInitialLineLength(8_192)
        .setMaxHeaderSize(16_384)
        .setAcceptBacklog(1_024)
        .setDecompressionSupported(false)
        .setHttp2ClearTextEnabled(false)
        .setCompressionSupported(false);
    this.server = vertx.createHttpServer(options);
    server.connectionHandler(this::onConnection);
    server.requestHandler(this::onRequest);
    this.client = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout(1_000).setKeepAlive(true)
        .setTcpNoDelay(true).setIdleTimeout(30), new PoolOptions().setHttp1MaxSize(64));
  }

  /** A server with default limits on {@code host:port} (0 = any free port). */
  public HttpApi(String host, int port) {
    this(HttpSettings.defaults(host, port));
  }

  /** Says routes are still being added (components starting): see {@link #routesComplete()}. */
  public void routesPending() {
    this.routesComplete = false;
  }

  /**
   * Says every route of this instance is registered. Between {@link #routesPending()} and this call, a request no route matches is answered
   * {@code 503} + {@code Retry-After} (the component that serves it may still be starting), never {@code 404}.
   */
  public void routesComplete() {
    this.routesComplete = true;
  }

  /** Requires a verified bearer token on every route under {@code prefix} (e.g. {@code /v1/}). */
  public HttpApi authenticate(String prefix, TokenVerifier tokenVerifier) {
    this.authPrefix = prefix;
    this.verifier = tokenVerifier;
    return this;
  }

  /**
   * Runs {@code check} before the handler of every route under {@code prefix} (the normalised path); it refuses a
   * request by throwing an {@link HttpError} (e.g. a 403 for a Host it does not serve).
   */
  public HttpApi guard(String prefix, java.util.function.Consumer<Request> check) {
    guards.add(new Guard(prefix, check));
    return this;
  }

  /** Adds a route whose handler runs on the worker pool; {@code pattern} segments in braces are path variables. */
  public HttpApi route(String method, String pattern, Handler handler) {
    return add(method, pattern, r -> CompletableFuture.completedFuture(handler.handle(r)), Kind.WORKER);
  }

  /** Adds a route whose handler answers asynchronously (see {@link AsyncHandler}). */
  public HttpApi routeAsync(String method, String pattern, AsyncHandler handler) {
    return add(method, pattern, handler, Kind.WORKER);
  }

  /**
   * Adds a route that never queues behind application work and needs no token ({@code /health}, {@code /metrics}):
   * it runs on a thread of its own.
   */
  public HttpApi system(String method, String pattern, Handler handler) {
    return add(method, pattern, r -> CompletableFuture.completedFuture(handler.handle(r)), Kind.SYSTEM);
  }

  /**
   * Adds a route answered on the event loop itself, with no thread hop and no queue: for probes ({@code /health})
   * whose handler only reads in-memory state and never blocks.
   */
  public HttpApi probe(String method, String pattern, Handler handler) {
    return add(method, pattern, r -> CompletableFuture.completedFuture(handler.handle(r)), Kind.PROBE);
  }

  /**
   * Serves WebSocket upgrades ({@code GET} with {@code Upgrade: websocket}) at exactly {@code path}. The bearer
   * token (header {@code Authorization: Bearer}, or {@code ?access_token=} since browsers cannot set headers on an
   * upgrade) is verified with the same verifier as the authenticated routes before the upgrade: 401 with
   * {@code WWW-Authenticate: Bearer} otherwise. Other requests to {@code path} are routed as usual.
   */
  public HttpApi webSocket(String path, WebSocketHandler handler) {
    socketRoutes.add(new SocketRoute(path, handler));
    return this;
  }

  /**
   * Every route registered so far, as {@code "METHOD /pattern"} in registration order; WebSocket paths as
   * {@code "GET /path"} (what the API description is checked against).
   */
  public List<String> routes() {
    List<String> out = new java.util.ArrayList<>();
    routes.forEach(r -> out.add(r.method() + " /" + String.join("/", r.segments())));
    socketRoutes.forEach(s -> out.add("GET " + s.path()));
    return List.copyOf(out);
  }

  private HttpApi add(String method, String pattern, AsyncHandler handler, Kind kind) {
    String[] segments = pattern.replaceAll("^/+", "").split("/");
    routes.add(new Route(method.toUpperCase(Locale.ROOT), segments, handler, kind));
    return this;
  }

  public void start() {
    try {
      HttpServer listening = server.listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      boundPort = listening.actualPort();
    } catch (ExecutionException e) {
      throw new IllegalStateException("HTTP server cannot listen on " + settings.host() + ":" + settings.port()
          + ": " + e.getCause().getMessage(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting the HTTP server", e);
    } catch (TimeoutException e) {
      throw new IllegalStateException("HTTP server did not start listening within 30 s", e);
    }
  }

  /** The bound port (the configured one until {@link #start()}). */
  public int port() {
    return boundPort >= 0 ? boundPort : settings.port();
  }

  public HttpSettings settings() {
    return settings;
  }

  /** Signs and verifies instance-to-instance forwarding markers. */
  public ForwardMarker marker() {
    return marker;
  }

  /** The pool request handlers run on: continue work there after an asynchronous wait. */
  public Executor workers() {
    return workers;
  }

  /** A non-blocking HTTP client (forwarding to other instances). */
  public HttpClient client() {
    return client;
  }

  /** Completes after {@code delayMs} without holding a thread while waiting. */
  public CompletableFuture<Void> after(long delayMs) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    vertx.setTimer(Math.max(1, delayMs), id -> done.complete(null));
    return done;
  }

  /** Runs {@code task} on the worker pool; a full queue fails the stage with a 503. */
  public <T> CompletableFuture<T> onWorker(java.util.concurrent.Callable<CompletionStage<T>> task) {
    CompletableFuture<T> out = new CompletableFuture<>();
    try {
      workers.execute(() -> {
        try {
          task.call().whenComplete((v, e) -> {
            if (e != null) {
              out.completeExceptionally(e);
            } else {
              out.complete(v);
            }
          });
        } catch (Throwable e) {
          out.completeExceptionally(e);
        }
      });
    } catch (RejectedExecutionException e) {
      out.completeExceptionally(busy());
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------- connections

  private void onConnection(HttpConnection conn) {
    if (connections.incrementAndGet() > settings.maxConnections()) {
      connections.decrementAndGet();
      conn.close();
      return;
    }
    // Vert.x announces an HTTP/1 connection only once its first request head has been read, so the header deadline
    // starts after each answer (a kept-alive connection must send its next head in time); a client that goes
    // silent before its first head is closed by the idle timeout.
    ConnState state = new ConnState();
    connStates.put(conn, state);
    conn.closeHandler(v -> {
      connections.decrementAndGet();
      ConnState s = connStates.remove(conn);
      if (s != null && s.headerTimer >= 0) {
        vertx.cancelTimer(s.headerTimer);
      }
    });
  }

  /** A connection that has not sent a complete request head in time is closed (slow-header clients). */
  private void armHeaderTimer(HttpConnection conn, ConnState state) {
    state.headerTimer = vertx.setTimer(settings.headerTimeoutMs(), id -> {
      state.headerTimer = -1;
      conn.close();
    });
  }

  private void headRead(HttpServerRequest req) {
    ConnState state = connStates.get(req.connection());
    if (state != null && state.headerTimer >= 0) {
      vertx.cancelTimer(state.headerTimer);
      state.headerTimer = -1;
    }
  }

  private void answered(HttpServerRequest req) {
    ConnState state = connStates.get(req.connection());
    if (state != null) {
      armHeaderTimer(req.connection(), state);
    }
  }

  // ------------------------------------------------------------------------------------------------- requests

  private void onRequest(HttpServerRequest req) {
    headRead(req);
    Context ctx = Vertx.currentContext();
    String method = req.method().name();
    // One normal form for routing, the token check and handlers alike (`//v1/x` is `/v1/x` everywhere).
    String rawPath = RequestPaths.normalise(req.path());
    if (rawPath == null) {
      respondAndClose(req, ctx, error(400, "a path may not contain '.' or '..' segments"));
      return;
    }
    // A body larger than allowed is refused from its declared length, before a byte of it is read.
    String length = req.getHeader("Content-Length");
    if (length != null) {
      long declared;
      try {
        declared = Long.parseLong(length.trim());
      } catch (NumberFormatException e) {
        respondAndClose(req, ctx, error(400, "invalid Content-Length"));
        return;
      }
      if (declared > settings.maxBodyBytes()) {
        respondAndClose(req, ctx, error(413, "request body larger than " + settings.maxBodyBytes() + " bytes"));
        return;
      }
    }
    if (!socketRoutes.isEmpty() && "GET".equals(method)
        && "websocket".equalsIgnoreCase(String.valueOf(req.getHeader("Upgrade")))) {
      for (SocketRoute r : socketRoutes) {
        if (r.path().equals(rawPath)) {
          upgrade(req, ctx, r, rawPath);
          return;
        }
      }
    }
    String[] parts = rawPath.replaceAll("^/+", "").split("/", -1);
    Route route = null;
    Map<String, String> vars = null;
    boolean pathMatched = false;
    for (Route r : routes) {
      Map<String, String> v = match(r.segments(), parts);
      if (v == null) {
        continue;
      }
      pathMatched = true;
      if (r.method().equals(method)) {
        route = r;
        vars = v;
        break;
      }
    }
    if (route == null) {
      Response error = pathMatched ? error(405, "method " + method + " not allowed on " + rawPath)
          : !routesComplete ? error(503, "starting, retry").withHeader("Retry-After", RETRY_AFTER)
          : error(404, "no such endpoint: " + method + " " + rawPath);
      if (req.isEnded() || "0".equals(length) || length == null && !req.headers().contains("Transfer-Encoding")) {
        drainThenRespond(req, ctx, error);
      } else {
        respondAndClose(req, ctx, error); // no reason to read a body nobody will handle
      }
      return;
    }
    if ("100-continue".equalsIgnoreCase(req.getHeader("Expect"))) {
      req.response().writeContinue();
    }
    Route chosen = route;
    Map<String, String> pathVars = vars;
    Buffer body = Buffer.buffer();
    AtomicBoolean tooLarge = new AtomicBoolean();
    long bodyTimer = vertx.setTimer(settings.bodyTimeoutMs(), id -> {
      if (!req.isEnded()) {
        respondAndClose(req, ctx, error(408, "request body not received within "
            + settings.bodyTimeoutMs() + " ms"));
      }
    });
    req.handler(chunk -> {
      if (tooLarge.get()) {
        return;
      }
      if (body.length() + chunk.length() > settings.maxBodyBytes()) {
        tooLarge.set(true);
        vertx.cancelTimer(bodyTimer);
        respondAndClose(req, ctx, error(413, "request body larger than " + settings.maxBodyBytes() + " bytes"));
        return;
      }
      body.appendBuffer(chunk);
    });
    req.exceptionHandler(e -> vertx.cancelTimer(bodyTimer));
    String path = rawPath;
    req.endHandler(v -> {
      vertx.cancelTimer(bodyTimer);
      if (!tooLarge.get()) {
        dispatch(req, ctx, chosen, path, pathVars, body.getBytes());
      }
    });
  }

  private void dispatch(HttpServerRequest req, Context ctx, Route route, String path, Map<String, String> vars,
      byte[] body) {
    Map<String, String> headers = new HashMap<>();
    req.headers().forEach(h -> headers.putIfAbsent(h.getKey().toLowerCase(Locale.ROOT), h.getValue()));
    String rawUri = req.uri();
    Map<String, String> query = parseQuery(req.query());
    OptionalLong forwarded = marker.verify(headers.get(ForwardMarker.HEADER.toLowerCase(Locale.ROOT)),
        route.method(), rawUri, headers.get("authorization"), body, System.currentTimeMillis());
    // Handlers see only a verified marker; a client-sent one is dropped here.
    headers.remove(ForwardMarker.HEADER.toLowerCase(Locale.ROOT));
    Request request = new Request(route.method(), path, vars, query, headers, body, rawUri, null, forwarded);
    AtomicBoolean done = new AtomicBoolean();
    long deadline = vertx.setTimer(settings.requestTimeoutMs(), id -> {
      if (done.compareAndSet(false, true)) {
        respond(req, ctx, error(503, "request not answered within " + settings.requestTimeoutMs() + " ms, retry")
            .withHeader("Retry-After", RETRY_AFTER));
      }
    });
    Runnable work = () -> {
      CompletionStage<Response> stage;
      try {
        stage = route.handler().handle(authenticated(route, guarded(request)));
      } catch (Throwable e) {
        stage = CompletableFuture.failedFuture(e);
      }
      stage.whenComplete((response, failure) -> {
        if (!done.compareAndSet(false, true)) {
          return;
        }
        vertx.cancelTimer(deadline);
        respond(req, ctx, failure == null ? response : toResponse(req, failure));
      });
    };
    if (route.kind() == Kind.PROBE) {
      work.run();
      return;
    }
    try {
      (route.kind() == Kind.SYSTEM ? system : workers).execute(work);
    } catch (RejectedExecutionException e) {
      if (done.compareAndSet(false, true)) {
        vertx.cancelTimer(deadline);
        respond(req, ctx, toResponse(req, busy()));
      }
    }
  }

  /** Verifies the token and asks the handler on a worker, then upgrades on the connection's context. */
  private void upgrade(HttpServerRequest req, Context ctx, SocketRoute route, String path) {
    req.pause();
    Map<String, String> headers = new HashMap<>();
    req.headers().forEach(h -> headers.putIfAbsent(h.getKey().toLowerCase(Locale.ROOT), h.getValue()));
    headers.remove(ForwardMarker.HEADER.toLowerCase(Locale.ROOT));
    Map<String, String> query;
    try {
      query = parseQuery(req.query());
    } catch (HttpError e) {
      respondAndClose(req, ctx, error(e.status(), e.getMessage()));
      return;
    }
    Request request = new Request("GET", path, Map.of(), query, headers, new byte[0], req.uri(), null,
        OptionalLong.empty());
    try {
      workers.execute(() -> {
        java.util.function.Consumer<io.vertx.core.http.ServerWebSocket> open;
        try {
          if (verifier == null) {
            throw HttpError.unauthorized("a bearer token is required");
          }
          open = route.handler().accept(authenticated(guarded(request), true));
        } catch (Throwable e) {
          respondAndClose(req, ctx, toResponse(req, e));
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
      respondAndClose(req, ctx, toResponse(req, busy()));
    }
  }

  private Request authenticated(Route route, Request request) {
    TokenVerifier v = verifier;
    if (route.kind() != Kind.WORKER || v == null || authPrefix == null || !request.path().startsWith(authPrefix)) {
      return request;
    }
    return authenticated(request, false);
  }

  private Request guarded(Request request) {
    for (Guard g : guards) {
      if (request.path().startsWith(g.prefix())) {
        g.check().accept(request);
      }
    }
    return request;
  }

  /**
   * The request with its verified caller. The token comes from {@code Authorization: Bearer}; only on a WebSocket
   * upgrade ({@code upgrade}) also from {@code ?access_token=}, since browsers cannot set headers there. Everywhere
   * else a query token is ignored: it would end up in access logs and browser history.
   */
  private Request authenticated(Request request, boolean upgrade) {
    TokenVerifier v = verifier;
    String header = request.headers().get("authorization");
    String token = null;
    if (header != null) {
      if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
        throw HttpError.unauthorized("Authorization must be a Bearer token");
      }
      token = header.substring(7).trim();
    } else if (upgrade) {
      token = request.query().get("access_token");
    }
    if (token == null || token.isEmpty()) {
      throw HttpError.unauthorized("a bearer token is required");
    }
    try {
      Principal principal = v.verify(token);
      return request.withPrincipal(principal);
    } catch (AuthException e) {
      if (e.temporary()) {
        LOG.warn("Token not verifiable now: {}", e.getMessage());
        throw HttpError.unavailable("token keys unavailable, retry", 5);
      }
      throw HttpError.unauthorized(e.getMessage());
    }
  }

  private static HttpError busy() {
    return new HttpError(503, "server busy, retry", Map.of("Retry-After", RETRY_AFTER));
  }

  private Response toResponse(HttpServerRequest req, Throwable failure) {
    Throwable e = failure;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    if (e instanceof HttpError http) {
      Response response;
      if (ErrorBodies.redacted(http.status(), http.getMessage())) {
        // Internal detail (stores, partitions, offsets, exception text) stays in the log.
        String id = UUID.randomUUID().toString();
        LOG.info("{} {} answered {} (correlation id {}): {}", req.method(), req.path(), http.status(), id,
            http.getMessage());
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
    LOG.warn("{} {} failed (correlation id {})", req.method(), req.path(), id, e);
    return Response.json(500, Map.of("error", "internal error", "correlationId", id))
        .withHeader("X-Correlation-Id", id);
  }

  private void drainThenRespond(HttpServerRequest req, Context ctx, Response response) {
    if (req.isEnded()) {
      respond(req, ctx, response);
    } else {
      req.handler(b -> {});
      req.endHandler(v -> respond(req, ctx, response));
      req.exceptionHandler(e -> {});
    }
  }

  /**
   * Answers and ends the connection. The rest of the body (if any) is discarded for a short grace period first:
   * closing with unread data makes the client's TCP stack reset the connection, and the client may then never read
   * the answer.
   */
  private void respondAndClose(HttpServerRequest req, Context ctx, Response response) {
    ctx.runOnContext(v -> {
      if (req.response().ended() || req.response().closed()) {
        return;
      }
      write(req, response.withHeader("Connection", "close"), settings.writeTimeoutMs());
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
    });
  }

  private void respond(HttpServerRequest req, Context ctx, Response response) {
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
      write(req, response, settings.writeTimeoutMs());
      answered(req);
    });
  }

  /**
   * Writes the answer; when the client has not taken all of it within {@code writeTimeoutMs} (it does not read),
   * the connection is closed, which frees what was buffered for it.
   */
  private void write(HttpServerRequest req, Response response, long writeTimeoutMs) {
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

  private static Map<String, String> match(String[] pattern, String[] parts) {
    if (pattern.length != parts.length) {
      return null;
    }
    Map<String, String> vars = new HashMap<>();
    for (int i = 0; i < pattern.length; i++) {
      String p = pattern[i];
      if (p.startsWith("{") && p.endsWith("}")) {
        if (parts[i].isEmpty()) {
          return null;
        }
        // '+' is literal in a path (URLDecoder is for form data, where it means a space).
        try {
          vars.put(p.substring(1, p.length() - 1),
              URLDecoder.decode(parts[i].replace("+", "%2B"), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
          return null;
        }
      } else if (!p.equals(parts[i])) {
        return null;
      }
    }
    return vars;
  }

  private static Map<String, String> parseQuery(String raw) {
    Map<String, String> query = new HashMap<>();
    if (raw == null || raw.isEmpty()) {
      return query;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      try {
        String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
        String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
        query.putIfAbsent(key, value);
      } catch (IllegalArgumentException e) {
        throw HttpError.badRequest("malformed query string");
      }
    }
    return query;
  }

  private static Response error(int status, String message) {
    return Response.json(status, Map.of("error", message == null ? "error" : message));
  }

  /** Requests waiting for a worker right now (a gauge). */
  public int queued() {
    return workers.getQueue().size();
  }

  /** Open connections right now (a gauge). */
  public int openConnections() {
    return connections.get();
  }

  @Override
  public void close() {
    try {
      server.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("HTTP server close: {}", e.toString());
    }
    workers.shutdownNow();
    system.shutdownNow();
    try {
      vertx.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("Vert.x close: {}", e.toString());
    }
  }
}
