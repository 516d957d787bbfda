package dev.impipe.notify.provider;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** A loopback HTTP/1.1 server that records every request and answers with a scripted function. */
public final class LocalHttpServer implements AutoCloseable {

  /** A request as received. */
  public record Request(String method, String path, Map<String, List<String>> headers, byte[] body,
      java.time.Instant at) {
    public String header(String name) {
      return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name)).findFirst()
          .map(e -> e.getValue().get(0)).orElse(null);
    }

    public String bodyText() {
      return new String(body, java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  /** An answer: status, headers, body. */
  public record Answer(int status, Map<String, String> headers, String body) {
    public static Answer of(int status) {
      return new Answer(status, Map.of(), "");
    }
  }

  private final HttpServer server;
  private final List<Request> requests = new CopyOnWriteArrayList<>();

  public LocalHttpServer(Function<Request, Answer> answer) {
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.createContext("/", exchange -> handle(exchange, answer));
    server.start();
  }

  private void handle(HttpExchange exchange, Function<Request, Answer> answer) throws IOException {
    Request request = new Request(exchange.getRequestMethod(), exchange.getRequestURI().toString(),
        Map.copyOf(exchange.getRequestHeaders()), exchange.getRequestBody().readAllBytes(), java.time.Instant.now());
    requests.add(request);
    Answer a = answer.apply(request);
    a.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
    byte[] body = a.body().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(a.status(), body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      exchange.getResponseBody().write(body);
    }
    exchange.close();
  }

  public String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  public List<Request> requests() {
    return List.copyOf(requests);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
