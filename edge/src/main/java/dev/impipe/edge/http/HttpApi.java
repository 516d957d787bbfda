package dev.impipe.edge.http;

import dev.impipe.edge.auth.TokenVerifier;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.PlatformHandler;
import io.vertx.ext.web.handler.TimeoutHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JSON-over-HTTP server of a pipeline process, on Vert.x and vertx-web: an event loop accepts connections, the
 * router matches requests to routes ({@code {name}} path variables, 404 and 405), {@link BodyHandler} reads bodies up
 * to the limit; handlers run on a bounded worker pool (blocking store reads are fine there), and asynchronous
 * handlers ({@link #routeAsync}) may wait for Kafka or for a store to catch up without holding any thread.
 *
 * <p>What keeps one client from stalling the others: a cap on open connections, a deadline for the request head
 * and one for the body, bodies limited in bytes (413 from {@code Content-Length}, before reading), a bounded work
 * queue (full: 503 + {@code Retry-After}), a deadline per request ({@link TimeoutHandler}, 503), and system routes
 * ({@code /health}, {@code /metrics}) that never queue behind {@code /v1} work. Routes under the authenticated prefix
 * need a valid bearer token (401 + {@code WWW-Authenticate: Bearer} otherwise); a 500 answers only a correlation id,
 * the detail goes to the log. Routing, the token check and handlers see one normal form of the path.
 */
public final class HttpApi implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);

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
    Consumer<ServerWebSocket> accept(Request request) throws Exception;
  }

  private final HttpSettings settings;
  private final List<String> routes = new CopyOnWriteArrayList<>();
  private final Vertx vertx;
  private final Router router;
  private final HttpServer server;
  private final HttpClient client;
  private final ThreadPoolExecutor workers;
  private final ExecutorService system;
  private final ForwardMarker marker;
  private final ConnectionLimits connections;
  private final Answers answers;
  private final BearerAuth auth = new BearerAuth();
  private final Dispatcher dispatcher;
  private final SocketUpgrades sockets;
  private final BodyHandler bodies;
  private final TimeoutHandler deadline;
  private final RequestEdges edges;
  private volatile int boundPort = -1;
  /** False between {@link #routesPending()} and {@link #routesComplete()}: routes are still being added. */
  private volatile boolean routesComplete = true;

  public HttpApi(HttpSettings settings) {
    this.settings = settings;
    this.vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(2)
        .setBlockedThreadCheckInterval(10).setBlockedThreadCheckIntervalUnit(TimeUnit.SECONDS));
    AtomicInteger n = new AtomicInteger();
    this.workers = new ThreadPoolExecutor(settings.workers(), settings.workers(), 60, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(settings.queue()), r -> daemon(r, "http-worker-" + n.incrementAndGet()),
        new ThreadPoolExecutor.AbortPolicy());
    this.system = Executors.newSingleThreadExecutor(r -> daemon(r, "http-system"));
    this.marker = new ForwardMarker(settings.clusterKey());
    this.connections = new ConnectionLimits(vertx, settings.maxConnections(), settings.headerTimeoutMs());
    this.answers = new Answers(vertx, settings.writeTimeoutMs(), connections);
    this.dispatcher = new Dispatcher(marker, auth, answers, workers, system);
    this.sockets = new SocketUpgrades(auth, answers, workers);
    this.bodies = BodyHandler.create(false).setBodyLimit(settings.maxBodyBytes()).setMergeFormAttributes(false);
    this.deadline = TimeoutHandler.create(settings.requestTimeoutMs(), 503);
    this.edges = new RequestEdges(vertx, settings, connections, answers, sockets);
    this.router = Router.router(vertx);
    router.route().handler(edges::onRequest);
    router.route().failureHandler(edges::onFailure);
    router.errorHandler(404, rc -> edges.unmatched(rc, !routesComplete
        ? Failures.error(503, "starting, retry").withHeader("Retry-After", Failures.RETRY_AFTER)
        : Failures.error(404, "no such endpoint: " + rc.request().method().name() + " " + rc.normalizedPath())));
    router.errorHandler(405, rc -> edges.unmatched(rc, Failures.error(405, "method " + rc.request().method().name()
        + " not allowed on " + rc.normalizedPath())));
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
    server.connectionHandler(connections::opened);
    server.requestHandler(router);
    this.client = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout(1_000).setKeepAlive(true)
        .setTcpNoDelay(true).setIdleTimeout(30), new PoolOptions().setHttp1MaxSize(64));
  }

  /** A server with default limits on {@code host:port} (0 = any free port). */
  public HttpApi(String host, int port) {
    this(HttpSettings.defaults(host, port));
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** Says routes are still being added (components starting): see {@link #routesComplete()}. */
  public void routesPending() {
    this.routesComplete = false;
  }

  /**
   * Says every route of this instance is registered. Between {@link #routesPending()} and this call, a request no
   * route matches is answered {@code 503} + {@code Retry-After} (the component that serves it may still be
   * starting), never {@code 404}.
   */
  public void routesComplete() {
    this.routesComplete = true;
  }

  /** Requires a verified bearer token on every route under {@code prefix} (e.g. {@code /v1/}). */
  public HttpApi authenticate(String prefix, TokenVerifier tokenVerifier) {
    auth.require(prefix, tokenVerifier);
    return this;
  }

  /**
   * Runs {@code check} before the handler of every route under {@code prefix} (the normalised path); it refuses a
   * request by throwing an {@link HttpError} (e.g. a 403 for a Host it does not serve).
   */
  public HttpApi guard(String prefix, Consumer<Request> check) {
    auth.guard(prefix, check);
    return this;
  }

  /** Adds a route whose handler runs on the worker pool; {@code pattern} segments in braces are path variables. */
  public HttpApi route(String method, String pattern, Handler handler) {
    return add(method, pattern, r -> CompletableFuture.completedFuture(handler.handle(r)), RouteKind.WORKER);
  }

  /** Adds a route whose handler answers asynchronously (see {@link AsyncHandler}). */
  public HttpApi routeAsync(String method, String pattern, AsyncHandler handler) {
    return add(method, pattern, handler, RouteKind.WORKER);
  }

  /**
   * Adds a route that never queues behind application work and needs no token ({@code /health}, {@code /metrics}):
   * it runs on a thread of its own.
   */
  public HttpApi system(String method, String pattern, Handler handler) {
    return add(method, pattern, r -> CompletableFuture.completedFuture(handler.handle(r)), RouteKind.SYSTEM);
  }

  /**
   * Adds a route answered on the event loop itself, with no thread hop and no queue: for probes ({@code /health})
   * whose handler only reads in-memory state and never blocks.
   */
  public HttpApi probe(String method, String pattern, Handler handler) {
    return add(method, pattern, r -> CompletableFuture.completedFuture(handler.handle(r)), RouteKind.PROBE);
  }

  /**
   * Serves WebSocket upgrades ({@code GET} with {@code Upgrade: websocket}) at exactly {@code path}. The bearer
   * token (header {@code Authorization: Bearer}, or {@code ?access_token=} since browsers cannot set headers on an
   * upgrade) is verified with the same verifier as the authenticated routes before the upgrade: 401 with
   * {@code WWW-Authenticate: Bearer} otherwise. Other requests to {@code path} are routed as usual.
   */
  public HttpApi webSocket(String path, WebSocketHandler handler) {
    sockets.add(path, handler);
    return this;
  }

  /**
   * Every route registered so far, as {@code "METHOD /pattern"} in registration order; WebSocket paths as
   * {@code "GET /path"} (what the API description is checked against).
   */
  public List<String> routes() {
    List<String> out = new ArrayList<>(routes);
    sockets.paths().forEach(p -> out.add("GET " + p));
    return List.copyOf(out);
  }

  private HttpApi add(String method, String pattern, AsyncHandler handler, RouteKind kind) {
    String verb = method.toUpperCase(Locale.ROOT);
    router.route(HttpMethod.valueOf(verb), RoutePatterns.forRouter(pattern))
        .handler((PlatformHandler) edges::bodyDeadline)
        .handler(bodies)
        // The request deadline starts once the body is in (the body has its own), so it runs after BodyHandler.
        .handler(deadline::handle)
        .handler(rc -> dispatcher.dispatch(rc, verb, handler, kind));
    routes.add(verb + " " + RoutePatterns.canonical(pattern));
    return this;
  }

  // ---------------------------------------------------------------------------------------------- lifecycle

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
  public <T> CompletableFuture<T> onWorker(Callable<CompletionStage<T>> task) {
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
      out.completeExceptionally(Failures.busy());
    }
    return out;
  }

  /** Requests waiting for a worker right now (a gauge). */
  public int queued() {
    return workers.getQueue().size();
  }

  /** Open connections right now (a gauge). */
  public int openConnections() {
    return connections.open();
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
