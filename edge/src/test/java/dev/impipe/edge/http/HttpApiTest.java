package dev.impipe.edge.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import dev.impipe.edge.auth.AuthException;
import dev.impipe.edge.auth.Principal;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The router as an HTTP client sees it: real sockets on 127.0.0.1, an ephemeral port. */
class HttpApiTest {

  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private HttpApi api;
  private final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);

  @BeforeEach
  void start() throws IOException {
    api = new HttpApi(HttpSettings.fromEnv(Map.of("IM_HTTP_WORKERS", "2", "IM_HTTP_QUEUE", "32",
        "IM_HTTP_HEADER_TIMEOUT", "500ms", "IM_HTTP_IDLE_TIMEOUT", "1s", "IM_HTTP_REQUEST_TIMEOUT", "5s"), 0));
    api.authenticate("/v1/", token -> {
      if (!token.startsWith("good-")) {
        throw new AuthException("bad signature");
      }
      return new Principal(token.substring(5), Optional.empty(), Instant.now().plusSeconds(60), token);
    });
    api.route("GET", "/v1/whoami", request -> Response.json(200, Map.of("user", request.caller().userId())));
    api.routeAsync("GET", "/v1/slow", request -> api.after(300).thenApply(v -> Response.json(200, Map.of())));
    api.route("GET", "/block", request -> {
      release.await(20, java.util.concurrent.TimeUnit.SECONDS);
      return Response.empty(204);
    });
    api.route("GET", "/v1/forwarded", request -> Response.json(200, Map.of("forwarded", request.forwarded())));
    api.route("GET", "/users/{userId}/inbox", request -> Response.json(200, Map.of(
        "userId", request.path("userId"),
        "from", request.longQuery("from", 0, 0, Long.MAX_VALUE),
        "limit", request.longQuery("limit", 50, 1, 500),
        "q", request.query("q").orElse("<none>"),
        "requestId", String.valueOf(request.headers().get("x-request-id")))));
    api.route("POST", "/users/{userId}/cursor", request -> Response.json(200, Map.of(
        "userId", request.path("userId"),
        "seq", request.jsonObject().path("seq").asLong(-1))));
    api.route("GET", "/conversations/{a}/messages/{b}", request -> Response.json(200, Map.of(
        "a", request.path("a"), "b", request.path("b"))));
    api.route("GET", "/limited", request -> {
      throw new HttpError(429, "slow down", Map.of("Retry-After", "3"));
    });
    api.route("GET", "/bad", request -> {
      throw HttpError.badRequest("conversation id must not be empty");
    });
    api.route("GET", "/boom", request -> {
      throw new IllegalStateException("store not ready");
    });
    api.route("DELETE", "/things/{id}", request -> Response.empty(204));
    api.system("GET", "/health", request -> Response.text(200, "text/plain", "ok"));
    api.webSocket("/v1/ws", request -> {
      if (request.query("device").isEmpty()) {
        throw HttpError.badRequest("device required");
      }
      String user = request.caller().userId();
      return ws -> ws.writeTextMessage("hello " + user + " on " + request.query("device").get());
    });
    api.start();
  }

  @AfterEach
  void stop() {
    api.close();
  }

  private HttpResponse<String> send(String method, String pathAndQuery, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + pathAndQuery))
        .timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String pathAndQuery) throws Exception {
    return send("GET", pathAndQuery, null);
  }

  private static JsonNode json(HttpResponse<String> response) throws IOException {
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    return Json.MAPPER.readTree(response.body());
  }

  @Test
  void pathVariablesAndQueryParametersReachTheHandlerDecoded() throws Exception {
    HttpResponse<String> response = get("/users/alice%20smith%2Fwork/inbox?from=7&limit=20&q=a%26b%3Dc");

    assertThat(response.statusCode()).isEqualTo(200);
    JsonNode body = json(response);
    assertThat(body.get("userId").asText()).isEqualTo("alice smith/work");
    assertThat(body.get("from").asLong()).isEqualTo(7);
    assertThat(body.get("limit").asLong()).isEqualTo(20);
    assertThat(body.get("q").asText()).isEqualTo("a&b=c");
  }

  @Test
  void aPlusInAPathVariableIsAPlus() throws Exception {
    // In a URL path '+' is a literal character (only form-encoded queries use it for a space): "+49..." ids.
    JsonNode body = json(get("/users/+4915112345/inbox?q=a+b"));

    assertThat(body.get("userId").asText()).isEqualTo("+4915112345");
    assertThat(body.get("q").asText()).as("form-encoded query: '+' is a space").isEqualTo("a b");
  }

  @Test
  void severalPathVariablesAndQueryDefaults() throws Exception {
    JsonNode body = json(get("/conversations/g-1/messages/m%C3%A9"));
    assertThat(body.get("a").asText()).isEqualTo("g-1");
    assertThat(body.get("b").asText()).isEqualTo("m\u00e9");

    JsonNode inbox = json(get("/users/bob/inbox"));
    assertThat(inbox.get("from").asLong()).isZero();
    assertThat(inbox.get("limit").asLong()).isEqualTo(50);
    assertThat(inbox.get("q").asText()).isEqualTo("<none>");
  }

  @Test
  void requestHeadersAreReadableInLowerCase() throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/users/bob/inbox"))
        .header("X-Request-Id", "r-17").timeout(Duration.ofSeconds(10)).build();

    JsonNode body = json(CLIENT.send(request, HttpResponse.BodyHandlers.ofString()));

    assertThat(body.get("requestId").asText()).isEqualTo("r-17");
  }

  @Test
  void unknownPathIs404WithAJsonError() throws Exception {
    HttpResponse<String> response = get("/nope/nothing");

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(json(response).get("error").asText()).contains("GET /nope/nothing");
    // A known prefix with a missing or extra segment is not a match either.
    assertThat(get("/users/bob").statusCode()).isEqualTo(404);
    assertThat(get("/users//inbox").statusCode()).isEqualTo(404);
    assertThat(get("/users/bob/inbox/extra").statusCode()).isEqualTo(404);
  }

  @Test
  void whileRoutesAreStillBeingAddedAnUnknownPathIs503WithRetryAfterNot404() throws Exception {
    api.routesPending();
    try {
      HttpResponse<String> response = get("/nope/nothing");
      assertThat(response.statusCode()).isEqualTo(503);
      assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
    } finally {
      api.routesComplete();
    }
    assertThat(get("/nope/nothing").statusCode()).isEqualTo(404);
  }

  @Test
  void wrongMethodIs405() throws Exception {
    HttpResponse<String> response = send("POST", "/users/bob/inbox", "{}");

    assertThat(response.statusCode()).isEqualTo(405);
    assertThat(json(response).get("error").asText()).contains("POST").contains("/users/bob/inbox");
    assertThat(send("DELETE", "/health", null).statusCode()).isEqualTo(405);
  }

  @Test
  void httpErrorFromAHandlerIsAnsweredWithItsStatusMessageAndHeaders() throws Exception {
    HttpResponse<String> bad = get("/bad");
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(json(bad).get("error").asText()).isEqualTo("conversation id must not be empty");

    HttpResponse<String> limited = get("/limited");
    assertThat(limited.statusCode()).isEqualTo(429);
    assertThat(limited.headers().firstValue("Retry-After")).hasValue("3");
    assertThat(json(limited).get("error").asText()).isEqualTo("slow down");
  }

  @Test
  void handlerExceptionIs500AndTheServerKeepsServing() throws Exception {
    HttpResponse<String> response = get("/boom");

    assertThat(response.statusCode()).isEqualTo(500);
    // The detail goes to the log; the client gets a generic message and a correlation id to quote.
    assertThat(response.body()).doesNotContain("IllegalStateException").doesNotContain("store not ready");
    assertThat(json(response).get("error").asText()).isEqualTo("internal error");
    assertThat(json(response).get("correlationId").asText()).isNotBlank()
        .isEqualTo(response.headers().firstValue("X-Correlation-Id").orElseThrow());
    assertThat(get("/health").statusCode()).isEqualTo(200);
  }

  @Test
  void outOfBoundsOrNonNumericQueryIs400NamingTheParameter() throws Exception {
    HttpResponse<String> tooBig = get("/users/bob/inbox?limit=501");
    assertThat(tooBig.statusCode()).isEqualTo(400);
    assertThat(json(tooBig).get("error").asText()).contains("'limit'").contains("between 1 and 500").contains("501");

    HttpResponse<String> tooSmall = get("/users/bob/inbox?limit=0");
    assertThat(tooSmall.statusCode()).isEqualTo(400);
    assertThat(json(tooSmall).get("error").asText()).contains("'limit'");

    HttpResponse<String> notANumber = get("/users/bob/inbox?from=ten");
    assertThat(notANumber.statusCode()).isEqualTo(400);
    assertThat(json(notANumber).get("error").asText()).contains("'from'").contains("whole number").contains("ten");

    HttpResponse<String> negative = get("/users/bob/inbox?from=-1");
    assertThat(negative.statusCode()).isEqualTo(400);
    assertThat(json(negative).get("error").asText()).contains("'from'");
  }

  @Test
  void jsonBodyIsParsedAndBadBodiesAre400() throws Exception {
    HttpResponse<String> ok = send("POST", "/users/bob/cursor", "{\"seq\": 12}");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(json(ok).get("seq").asLong()).isEqualTo(12);

    HttpResponse<String> malformed = send("POST", "/users/bob/cursor", "{\"seq\": ");
    assertThat(malformed.statusCode()).isEqualTo(400);
    assertThat(json(malformed).get("error").asText()).startsWith("malformed JSON body");

    HttpResponse<String> empty = send("POST", "/users/bob/cursor", null);
    assertThat(empty.statusCode()).isEqualTo(400);
    assertThat(json(empty).get("error").asText()).contains("JSON object");

    HttpResponse<String> array = send("POST", "/users/bob/cursor", "[1, 2]");
    assertThat(array.statusCode()).isEqualTo(400);
    assertThat(json(array).get("error").asText()).contains("JSON object");
  }

  @Test
  void oversizedBodyIs413() throws Exception {
    HttpResponse<String> response = send("POST", "/users/bob/cursor", "x".repeat((1 << 20) + 1));

    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(json(response).get("error").asText()).contains("larger than");
  }

  @Test
  void emptyAndTextResponses() throws Exception {
    HttpResponse<String> deleted = send("DELETE", "/things/7", null);
    assertThat(deleted.statusCode()).isEqualTo(204);
    assertThat(deleted.body()).isEmpty();

    HttpResponse<String> health = get("/health");
    assertThat(health.headers().firstValue("Content-Type")).hasValue("text/plain");
    assertThat(health.body()).isEqualTo("ok");
  }

  @Test
  void v1RoutesNeedAValidBearerToken() throws Exception {
    HttpResponse<String> none = get("/v1/whoami");
    assertThat(none.statusCode()).isEqualTo(401);
    assertThat(none.headers().firstValue("WWW-Authenticate"))
        .hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));

    HttpResponse<String> bad = CLIENT.send(HttpRequest.newBuilder(URI.create(base() + "/v1/whoami"))
        .header("Authorization", "Bearer forged").build(), HttpResponse.BodyHandlers.ofString());
    assertThat(bad.statusCode()).isEqualTo(401);
    assertThat(json(bad).get("error").asText()).isEqualTo("bad signature");

    HttpResponse<String> basic = CLIENT.send(HttpRequest.newBuilder(URI.create(base() + "/v1/whoami"))
        .header("Authorization", "Basic YTpi").build(), HttpResponse.BodyHandlers.ofString());
    assertThat(basic.statusCode()).isEqualTo(401);

    HttpResponse<String> ok = CLIENT.send(HttpRequest.newBuilder(URI.create(base() + "/v1/whoami"))
        .header("Authorization", "Bearer good-alice").build(), HttpResponse.BodyHandlers.ofString());
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(json(ok).get("user").asText()).isEqualTo("alice");

    // Routes outside /v1 need none.
    assertThat(get("/health").statusCode()).isEqualTo(200);
  }

  @Test
  void aClientSentForwardingMarkerIsIgnoredAndASignedOneIsSeen() throws Exception {
    HttpResponse<String> forged = CLIENT.send(HttpRequest.newBuilder(URI.create(base() + "/v1/forwarded"))
        .header("Authorization", "Bearer good-alice").header(ForwardMarker.HEADER, "5000").build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(json(forged).get("forwarded").asBoolean()).isFalse();

    String signed = api.marker().sign("GET", "/v1/forwarded", "Bearer good-alice", new byte[0], 5_000,
        System.currentTimeMillis());
    HttpResponse<String> real = CLIENT.send(HttpRequest.newBuilder(URI.create(base() + "/v1/forwarded"))
        .header("Authorization", "Bearer good-alice").header(ForwardMarker.HEADER, signed).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(json(real).get("forwarded").asBoolean()).isTrue();

    // A marker signed for another path does not carry over.
    String other = api.marker().sign("GET", "/v1/whoami", "Bearer good-alice", new byte[0], 5_000,
        System.currentTimeMillis());
    HttpResponse<String> replayed = CLIENT.send(HttpRequest.newBuilder(URI.create(base() + "/v1/forwarded"))
        .header("Authorization", "Bearer good-alice").header(ForwardMarker.HEADER, other).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(json(replayed).get("forwarded").asBoolean()).isFalse();
  }

  @Test
  void aFullWorkQueueIs503WithRetryAfterAndHealthStillAnswers() throws Exception {
    // Two workers blocked, 32 queued behind them: the next request is refused at once.
    var blocked = new java.util.ArrayList<java.util.concurrent.CompletableFuture<HttpResponse<String>>>();
    for (int i = 0; i < 34; i++) {
      blocked.add(CLIENT.sendAsync(HttpRequest.newBuilder(URI.create(base() + "/block")).build(),
          HttpResponse.BodyHandlers.ofString()));
    }
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> api.queued() == 32);
    HttpResponse<String> refused = get("/users/bob/inbox");
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(get("/health").statusCode()).isEqualTo(200);
    release.countDown();
    for (var f : blocked) {
      assertThat(f.get(10, java.util.concurrent.TimeUnit.SECONDS).statusCode()).isEqualTo(204);
    }
  }

  @Test
  void asyncWaitsHoldNoWorker() throws Exception {
    // Two workers: twenty pending asynchronous waits do not occupy them, so a plain request still gets through.
    var pending = new java.util.ArrayList<java.util.concurrent.CompletableFuture<HttpResponse<String>>>();
    for (int i = 0; i < 20; i++) {
      pending.add(CLIENT.sendAsync(HttpRequest.newBuilder(URI.create(base() + "/v1/slow"))
          .header("Authorization", "Bearer good-alice").build(), HttpResponse.BodyHandlers.ofString()));
    }
    assertThat(get("/users/bob/inbox").statusCode()).isEqualTo(200);
    for (var f : pending) {
      assertThat(f.get(10, java.util.concurrent.TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
  }

  @Test
  void aDeclaredOversizedBodyIsRefusedBeforeItIsSent() throws Exception {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", api.port())) {
      socket.setSoTimeout(5_000);
      socket.getOutputStream().write(("POST /users/bob/cursor HTTP/1.1\r\nHost: x\r\n"
          + "Content-Length: 104857600\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      String head = new String(socket.getInputStream().readNBytes(12), java.nio.charset.StandardCharsets.US_ASCII);
      assertThat(head).isEqualTo("HTTP/1.1 413");
    }
  }

  @Test
  @Tag("slow") // waits out real header timeouts: run by verify's unit tests, not once per mutant by PIT
  void aClientThatStopsMidHeadersIsCutOff() throws Exception {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", api.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n".getBytes(
          java.nio.charset.StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      // The idle timeout (6 s here: never shorter than the request timeout + 1 s) closes the connection: the read ends instead of blocking.
      assertThat(socket.getInputStream().read()).isEqualTo(-1);
    }
    assertThat(get("/health").statusCode()).isEqualTo(200);
  }

  @Test
  @Tag("slow") // waits out real header timeouts: run by verify's unit tests, not once per mutant by PIT
  void aKeptAliveConnectionThatTricklesItsNextHeadIsCutOffAtTheHeaderTimeout() throws Exception {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", api.port())) {
      socket.setSoTimeout(10_000);
      var out = socket.getOutputStream();
      out.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      out.flush();
      var in = socket.getInputStream();
      byte[] first = new byte[12];
      assertThat(in.readNBytes(first, 0, 12)).isEqualTo(12);
      // Now trickle the next head, a byte every 200 ms (never idle): the 500 ms header
      // timeout ends it.
      long start = System.nanoTime();
      boolean closed = false;
      for (int i = 0; i < 40 && !closed; i++) {
        try {
          out.write('X');
          out.flush();
        } catch (java.io.IOException reset) {
          closed = true; // the server closed the connection: a write after its FIN/RST fails
        }
        java.util.concurrent.locks.LockSupport.parkNanos(200_000_000L); // the trickle's pace, not a settle wait
      }
      assertThat(closed).isTrue();
      assertThat(java.time.Duration.ofNanos(System.nanoTime() - start)).isLessThan(java.time.Duration.ofSeconds(5));
    }
  }

  @Test
  void aWebSocketIsUpgradedOnlyAfterItsTokenIsVerifiedAndTheHandlerGetsTheCaller() throws Exception {
    // Given a token in the query (as browsers send it), the upgrade succeeds and the handler knows the caller
    java.util.concurrent.CompletableFuture<String> greeting = new java.util.concurrent.CompletableFuture<>();
    WebSocket socket = HttpClient.newHttpClient().newWebSocketBuilder().buildAsync(
        URI.create("ws://127.0.0.1:" + api.port() + "/v1/ws?device=phone&access_token=good-alice"),
        new WebSocket.Listener() {
          @Override
          public java.util.concurrent.CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            greeting.complete(data.toString());
            return null;
          }
        }).get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(greeting.get(10, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("hello alice on phone");
    socket.abort();

    // (The Authorization-header variant is proved by PushGatewayIT through DeviceClient, which upgrades with the
    // header; here the JDK's WebSocket client hung on that handshake when run after the other tests of this class.)
  }

  @Test
  @Tag("slow") // reads each answer until the server closes the connection (seconds): not once per mutant by PIT
  void aWebSocketWithoutAValidTokenOrRefusedByItsHandlerGetsPlainHttpAndNoUpgrade() throws Exception {
    // A bad token: 401 with the challenge, before any upgrade
    HttpResponse<String> bad = upgradeRequest("/v1/ws?device=phone&access_token=evil-alice");
    assertThat(bad.statusCode()).isEqualTo(401);
    assertThat(bad.headers().firstValue("WWW-Authenticate"))
        .hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
    // No token at all
    assertThat(upgradeRequest("/v1/ws?device=phone").statusCode()).isEqualTo(401);
    // A good token the handler refuses
    assertThat(upgradeRequest("/v1/ws?access_token=good-alice").statusCode()).isEqualTo(400);
  }

  /** A raw upgrade request: the answer is what a client sees when the upgrade is refused. */
  private HttpResponse<String> upgradeRequest(String pathAndQuery) throws Exception {
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", api.port())) {
      s.setSoTimeout(10_000);
      String head = "GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
          + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
      s.getOutputStream().write(head.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      String answer = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      int status = Integer.parseInt(answer.substring(9, 12));
      Map<String, java.util.List<String>> headers = new java.util.HashMap<>();
      for (String line : answer.substring(0, answer.indexOf("\r\n\r\n")).split("\r\n")) {
        int colon = line.indexOf(':');
        if (colon > 0) {
          headers.put(line.substring(0, colon), java.util.List.of(line.substring(colon + 1).trim()));
        }
      }
      return new RawResponse(status, java.net.http.HttpHeaders.of(headers, (a, b) -> true));
    }
  }

  private record RawResponse(int statusCode, java.net.http.HttpHeaders headers) implements HttpResponse<String> {
    @Override
    public HttpRequest request() { return null; }
    @Override
    public Optional<HttpResponse<String>> previousResponse() { return Optional.empty(); }
    @Override
    public String body() { return ""; }
    @Override
    public Optional<javax.net.ssl.SSLSession> sslSession() { return Optional.empty(); }
    @Override
    public URI uri() { return null; }
    @Override
    public HttpClient.Version version() { return HttpClient.Version.HTTP_1_1; }
  }

  private String base() {
    return "http://127.0.0.1:" + api.port();
  }
}
