package dev.impipe.deploy;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.edge.auth.TestTokens;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/** A user of a running pipeline over its HTTP API only (what the deployment tests may see from outside). */
final class PipelineClient {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
  private final String base;

  PipelineClient(String base) {
    this.base = base;
  }

  /** Waits until {@code GET /health} answers 200, failing early when {@code alive} turns false. */
  void awaitHealthy(Duration timeout, BooleanSupplier alive) {
    await().atMost(timeout).pollInterval(Duration.ofMillis(500)).until(() -> {
      if (!alive.getAsBoolean()) {
        throw new IllegalStateException("the pipeline process/container exited before /health said 200");
      }
      return status("/health") == 200;
    });
  }

  int status(String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(3)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** {@code POST /v1/messages} as {@code from} to {@code to}; returns the HTTP status. */
  int send(String from, String to, String body, String clientMsgId) throws IOException, InterruptedException {
    String json = JSON.writeValueAsString(JSON.createObjectNode()
        .put("to", to).put("body", body).put("clientMsgId", clientMsgId));
    HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/messages"))
        .header("Authorization", TestTokens.bearer(from)).header("Content-Type", "application/json")
        .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(json)).build(),
        HttpResponse.BodyHandlers.ofString());
    return response.statusCode();
  }

  /**
   * Sends like a client that retries until it gets an answer: on a timeout or a 5xx it sends again with the same
   * clientMsgId (delivered once whatever happens). Returns the first non-5xx status.
   */
  int sendUntilAnswered(String from, String to, String body, String clientMsgId, Duration within) {
    java.util.concurrent.atomic.AtomicInteger status = new java.util.concurrent.atomic.AtomicInteger();
    await().atMost(within).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
        .until(() -> {
          status.set(send(from, to, body, clientMsgId));
          return status.get() < 500;
        });
    return status.get();
  }

  /** Every entry of {@code user}'s inbox from the start, paging through {@code GET /v1/users/{u}/inbox}. */
  List<JsonNode> inbox(String user) throws IOException, InterruptedException {
    List<JsonNode> entries = new ArrayList<>();
    String after = ""; // no after: from the start (seqs are offsets, the first one is 0)
    while (true) {
      HttpResponse<String> response = http.send(HttpRequest.newBuilder(
          URI.create(base + "/v1/users/" + user + "/inbox?limit=100" + after))
          .header("Authorization", TestTokens.bearer(user)).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IOException("inbox of " + user + ": " + response.statusCode() + " " + response.body());
      }
      JsonNode page = JSON.readTree(response.body());
      page.get("entries").forEach(entries::add);
      if (!page.path("hasMore").asBoolean(false)) {
        return entries;
      }
      after = "&after=" + page.get("next").asLong();
    }
  }

  /** {@code user}'s MESSAGE entries' bodies, in inbox order. */
  List<String> messageBodies(String user) throws IOException, InterruptedException {
    List<String> bodies = new ArrayList<>();
    for (JsonNode entry : inbox(user)) {
      if ("MESSAGE".equals(entry.path("type").asText())) {
        bodies.add(entry.path("body").asText());
      }
    }
    return bodies;
  }
}
