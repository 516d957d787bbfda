package dev.impipe.runtime.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small JSON-over-HTTP router on the JDK's HTTP server. Routes are {@code METHOD /path/{var}/...}; errors are
 * answered as {@code {"error": "..."}} with a 4xx/5xx status.
 */
public final class HttpApi implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);

  static {
    // Without TCP_NODELAY a small JSON response waits for the client's delayed ACK (~40 ms per request). The JDK
    // server reads this property once, when its first server is created.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }
  private static final int MAX_BODY_BYTES = 1 << 20;

  /** Handles one request. */
  @FunctionalInterface
  public interface Handler {
    Response handle(Request request) throws Exception;
  }

  private record Route(String method, String[] segments, Handler handler) {}

  private final List<Route> routes = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final HttpServer server;
  private final ExecutorService executor;

  public HttpApi(String host, int port, int threads) throws IOException {
    this.server = HttpServer.create(new InetSocketAddress(host, port), 256);
    this.executor = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "http-" + r.hashCode());
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/", this::dispatch);
  }

  /** Adds a route; {@code pattern} segments in braces are path variables. */
  public HttpApi route(String method, String pattern, Handler handler) {
    String[] segments = pattern.replaceAll("^/+", "").split("/");
    routes.add(new Route(method.toUpperCase(Locale.ROOT), segments, handler));
    return this;
  }

  public void start() {
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private void dispatch(HttpExchange exchange) {
    Response response;
    try {
      response = handle(exchange);
    } catch (HttpError e) {
      response = error(e.status(), e.getMessage());
      for (Map.Entry<String, String> h : e.headers().entrySet()) {
        response = response.withHeader(h.getKey(), h.getValue());
      }
    } catch (Exception e) {
      LOG.warn("{} {} failed", exchange.getRequestMethod(), exchange.getRequestURI(), e);
      response = error(500, "internal error: " + e.getClass().getSimpleName()
          + (e.getMessage() == null ? "" : ": " + e.getMessage()));
    }
    try (exchange) {
      response.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
      exchange.getResponseHeaders().set("Content-Type", response.contentType());
      byte[] body = response.body();
      exchange.sendResponseHeaders(response.status(), body.length == 0 ? -1 : body.length);
      if (body.length > 0) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      }
    } catch (IOException e) {
      LOG.debug("Client went away during {} {}", exchange.getRequestMethod(), exchange.getRequestURI());
    }
  }

  private Response handle(HttpExchange exchange) throws Exception {
    String method = exchange.getRequestMethod().toUpperCase(Locale.ROOT);
    String rawPath = exchange.getRequestURI().getRawPath();
    String[] parts = rawPath.replaceAll("^/+", "").split("/", -1);
    boolean pathMatched = false;
    for (Route route : routes) {
      Map<String, String> vars = match(route.segments(), parts);
      if (vars == null) {
        continue;
      }
      pathMatched = true;
      if (!route.method().equals(method)) {
        continue;
      }
      byte[] body = readBody(exchange.getRequestBody());
      Map<String, String> headers = new HashMap<>();
      exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v.get(0)));
      Request request = new Request(method, rawPath, vars, parseQuery(exchange.getRequestURI().getRawQuery()),
          headers, body);
      return route.handler().handle(request);
    }
    if (pathMatched) {
      return error(405, "method " + method + " not allowed on " + rawPath);
    }
    return error(404, "no such endpoint: " + method + " " + rawPath);
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
        vars.put(p.substring(1, p.length() - 1),
            URLDecoder.decode(parts[i].replace("+", "%2B"), StandardCharsets.UTF_8));
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
      String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      query.putIfAbsent(key, value);
    }
    return query;
  }

  private static byte[] readBody(InputStream in) throws IOException {
    byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
    if (body.length > MAX_BODY_BYTES) {
      throw new HttpError(413, "request body larger than " + MAX_BODY_BYTES + " bytes");
    }
    return body;
  }

  private static Response error(int status, String message) {
    return Response.json(status, Map.of("error", message == null ? "error" : message));
  }

  /** Lists the registered routes, for the start-up banner. */
  public List<String> describe() {
    List<String> out = new ArrayList<>();
    routes.forEach(r -> out.add(r.method() + " /" + String.join("/", r.segments())));
    return out;
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
    try {
      executor.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
