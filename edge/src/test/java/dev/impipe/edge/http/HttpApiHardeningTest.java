package dev.impipe.edge.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.edge.auth.AuthException;
import dev.impipe.edge.auth.Principal;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a hostile client can no longer do to the router: reach a {@code /v1} handler untokened through another
 * spelling of its path, use a query token outside the WebSocket upgrade, read internal detail from a 5xx body, or
 * make the server hold answers it never reads. Real sockets on 127.0.0.1.
 */
class HttpApiHardeningTest {

  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  /** The size of the fat answer: far beyond what loopback socket buffers hold for a client that does not read. */
  private static final int FAT_BYTES = 32 << 20;

  private HttpApi api;
  private final AtomicInteger reachedUntokened = new AtomicInteger();

  @BeforeEach
  void start() {
    api = new HttpApi(HttpSettings.fromEnv(Map.of("IM_HTTP_WORKERS", "2", "IM_HTTP_QUEUE", "32",
        "IM_HTTP_IDLE_TIMEOUT", "60s", "IM_HTTP_REQUEST_TIMEOUT", "5s", "IM_HTTP_WRITE_TIMEOUT", "1s"), 0));
    api.authenticate("/v1/", token -> {
      if (!token.startsWith("good-")) {
        throw new AuthException("bad signature");
      }
      return new Principal(token.substring(5), Optional.empty(), Instant.now().plusSeconds(60), token);
    });
    api.route("GET", "/v1/open", request -> {
      // A handler that forgot its own caller check: only the router's token check protects it.
      if (request.principal() == null) {
        reachedUntokened.incrementAndGet();
      }
      return Response.json(200, Map.of("path", request.path()));
    });
    api.route("GET", "/store", request -> {
      throw new HttpError(503, "not available, retry: store inbox-entries of partition 19 has applied im.inbox "
          + "up to offset 3", Map.of("Retry-After", "1"));
    });
    api.route("GET", "/kafka", request -> {
      throw HttpError.unavailable("org.apache.kafka.common.errors.TimeoutException on partition 3", 1);
    });
    api.route("GET", "/busy", request -> {
      throw HttpError.unavailable("timeline of group g not available, retry", 1);
    });
    byte[] fat = new byte[FAT_BYTES];
    java.util.Arrays.fill(fat, (byte) 'x');
    api.route("GET", "/fat", request -> Response.text(200, "text/plain", new String(fat, StandardCharsets.US_ASCII)));
    api.route("GET", "/small", request -> Response.json(200, Map.of("ok", true)));
    api.guard("/dev/", request -> {
      if (!"127.0.0.1".equals(LoopbackHostsForTest.host(request))) {
        throw HttpError.forbidden("not here");
      }
    });
    api.system("POST", "/dev/token", request -> Response.json(200, Map.of("token", "t")));
    api.start();
  }

  @AfterEach
  void stop() {
    api.close();
  }

  @Test
  void aDoubledLeadingSlashIsTheSamePathForRoutingAndForTheTokenCheck() throws Exception {
    // Given a /v1 handler that does not check its caller itself
    // When a client without a token asks for it as //v1/open (and ///v1//open)
    for (String path : new String[] {"//v1/open", "///v1//open", "/v1/open"}) {
      HttpResponse<String> r = raw("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      // Then it is 401 like /v1/open, and the handler never runs
      assertThat(r.statusCode()).as(path).isEqualTo(401);
    }
    assertThat(reachedUntokened).hasValue(0);

    // And with a token the handler sees the one normal form of the path
    HttpResponse<String> ok = raw("GET //v1/open HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer good-a\r\n"
        + "Connection: close\r\n\r\n");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).contains("\"path\":\"/v1/open\"");
  }

  @Test
  void aDeclaredOversizedBodyIs413OnAPathNoRouteServes() throws Exception {
    // Given a body declared at 100 MB, none of it sent, to a path this instance has no route for
    HttpResponse<String> r = raw("POST /v1/elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + (100L << 20)
        + "\r\nConnection: close\r\n\r\n");
    // Then it is refused from the declared length, not answered 404 after reading it
    assertThat(r.statusCode()).isEqualTo(413);
  }

  @Test
  void dotSegmentsAre400() throws Exception {
    HttpResponse<String> r = raw("GET /x/../v1/open HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(reachedUntokened).hasValue(0);
  }

  @Test
  void aQueryTokenIsNotAcceptedOutsideTheWebSocketUpgrade() throws Exception {
    // Given a valid token in ?access_token= on an ordinary /v1 route
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(URI.create(base() + "/v1/open?access_token=good-a"))
        .build(), HttpResponse.BodyHandlers.ofString());
    // Then it is not a token: 401
    assertThat(r.statusCode()).isEqualTo(401);
    assertThat(reachedUntokened).hasValue(0);
  }

  @Test
  void a503CarriesNoStorePartitionOffsetOrExceptionText() throws Exception {
    HttpResponse<String> store = get("/store");
    assertThat(store.statusCode()).isEqualTo(503);
    assertThat(store.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(Json.MAPPER.readTree(store.body()).get("error").asText()).isEqualTo("not available, retry");
    assertThat(store.body()).doesNotContain("partition", "offset", "im.inbox", "inbox-entries");
    assertThat(Json.MAPPER.readTree(store.body()).get("correlationId").asText())
        .isEqualTo(store.headers().firstValue("X-Correlation-Id").orElseThrow());

    HttpResponse<String> kafka = get("/kafka");
    assertThat(kafka.statusCode()).isEqualTo(503);
    assertThat(Json.MAPPER.readTree(kafka.body()).get("error").asText()).isEqualTo("temporarily unavailable, retry");
    assertThat(kafka.body()).doesNotContain("Exception", "partition");

    // A message written for the client stays as it is
    assertThat(Json.MAPPER.readTree(get("/busy").body()).get("error").asText())
        .isEqualTo("timeline of group g not available, retry");
  }

  @Test
  void aClientThatNeverReadsItsAnswerIsDroppedAndOthersAreServedMeanwhile() throws Exception {
    try (Socket lazy = new Socket()) {
      // Given a client with a tiny receive buffer that asks for a 32 MB answer and never reads a byte of it
      lazy.setReceiveBufferSize(4_096);
      lazy.connect(new java.net.InetSocketAddress("127.0.0.1", api.port()));
      lazy.getOutputStream().write("GET /fat HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      lazy.getOutputStream().flush();
      await().atMost(Duration.ofSeconds(5)).until(() -> api.openConnections() >= 1);

      // Then another client is answered meanwhile
      long t0 = System.nanoTime();
      assertThat(raw("GET /small HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").statusCode())
          .isEqualTo(200);
      // (a bound with room for a loaded 2-core machine; the lazy client is dropped only at 1 s + )
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));

      // And the lazy client's connection is closed once the write timeout (1 s) passes, not at the idle timeout
      // (60 s): what was buffered for it is freed, and it never gets the whole answer
      await().atMost(Duration.ofSeconds(10)).until(() -> api.openConnections() == 0);
      assertThat(readUntilClosed(lazy)).isLessThan(FAT_BYTES);
    }
  }

  @Test
  void pipelinedRequestsOfAClientThatDoesNotReadGetNoSecondAnswer() throws Exception {
    try (Socket lazy = new Socket()) {
      // Given a client that pipelines 20 requests for 32 MB answers and reads nothing
      lazy.setReceiveBufferSize(4_096);
      lazy.connect(new java.net.InetSocketAddress("127.0.0.1", api.port()));
      OutputStream out = lazy.getOutputStream();
      out.write("GET /fat HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(20).getBytes(StandardCharsets.US_ASCII));
      out.flush();

      // Then the connection is closed (at the second answer, or at the write timeout of the first)
      await().atMost(Duration.ofSeconds(10)).until(() -> api.openConnections() == 0);
      assertThat(readUntilClosed(lazy)).isLessThan(2L * FAT_BYTES);
    }
    assertThat(get("/small").statusCode()).isEqualTo(200);
  }

  @Test
  void aGuardRefusesBeforeTheHandler() throws Exception {
    HttpResponse<String> foreign = raw("POST /dev/token HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 0\r\n"
        + "Connection: close\r\n\r\n");
    assertThat(foreign.statusCode()).isEqualTo(403);
    HttpResponse<String> local = raw("POST //dev/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
        + "Connection: close\r\n\r\n");
    assertThat(local.statusCode()).isEqualTo(200);
  }

  /** Bytes the client can still read before the end of the stream (a reset ends it too). */
  private static long readUntilClosed(Socket socket) throws IOException {
    socket.setSoTimeout(10_000);
    long total = 0;
    byte[] buf = new byte[1 << 16];
    try {
      for (int n; (n = socket.getInputStream().read(buf)) >= 0;) {
        total += n;
      }
    } catch (java.net.SocketException reset) {
      // the server dropped the connection: what it had not sent is gone
    }
    return total;
  }

  private HttpResponse<String> get(String path) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(URI.create(base() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Sends {@code head} as is (the JDK client would normalise the path) and reads the whole answer. */
  private HttpResponse<String> raw(String head) throws IOException {
    try (Socket s = new Socket("127.0.0.1", api.port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
      InputStream in = s.getInputStream();
      String answer = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      int status = Integer.parseInt(answer.substring(9, 12));
      String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
      return new Answer(status, body);
    }
  }

  private record Answer(int statusCode, String body) implements HttpResponse<String> {
    @Override
    public HttpRequest request() {
      return null;
    }

    @Override
    public Optional<HttpResponse<String>> previousResponse() {
      return Optional.empty();
    }

    @Override
    public java.net.http.HttpHeaders headers() {
      return java.net.http.HttpHeaders.of(Map.of(), (a, b) -> true);
    }

    @Override
    public Optional<javax.net.ssl.SSLSession> sslSession() {
      return Optional.empty();
    }

    @Override
    public URI uri() {
      return null;
    }

    @Override
    public HttpClient.Version version() {
      return HttpClient.Version.HTTP_1_1;
    }
  }

  private String base() {
    return "http://127.0.0.1:" + api.port();
  }

  /** The Host header's name, as the dev-token guard reads it. */
  private static final class LoopbackHostsForTest {
    static String host(Request request) {
      return dev.impipe.edge.security.LoopbackHosts.hostOfHeader(request.headers().get("host"));
    }
  }
}
