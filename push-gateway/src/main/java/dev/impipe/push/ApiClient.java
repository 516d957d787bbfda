package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.edge.http.Json;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Calls the pipeline's own HTTP API as the device's user (its bearer token): the gateway reads backlogs through the
 * sync routes and sends through {@code POST /v1/messages}, so every rule those routes apply holds on the socket too.
 */
final class ApiClient {

  /** An answer: status, the JSON body (a missing node when empty) and its {@code Retry-After} (null: none). */
  record Reply(int status, JsonNode body, String retryAfter) {
    String error() {
      return body.path("error").asText("HTTP " + status);
    }
  }

  private static final long TIMEOUT_MS = 15_000;

  private final HttpClient client;
  private final String base;

  ApiClient(HttpClient client, String base) {
    this.client = client;
    this.base = base;
  }

  CompletableFuture<Reply> get(String pathAndQuery, String token) {
    return call(HttpMethod.GET, pathAndQuery, token, null);
  }

  CompletableFuture<Reply> post(String path, String token, byte[] json) {
    return call(HttpMethod.POST, path, token, json);
  }

  private CompletableFuture<Reply> call(HttpMethod method, String path, String token, byte[] json) {
    RequestOptions options = new RequestOptions().setMethod(method).setAbsoluteURI(base + path)
        .putHeader("Authorization", "Bearer " + token);
    return client.request(options)
        .compose(req -> json == null ? req.send()
            : req.putHeader("Content-Type", "application/json").send(Buffer.buffer(json)))
        .compose(resp -> resp.body().map(b -> new Reply(resp.statusCode(), parse(b),
            resp.getHeader("Retry-After"))))
        .toCompletionStage().toCompletableFuture()
        .orTimeout(TIMEOUT_MS, TimeUnit.MILLISECONDS);
  }

  private static JsonNode parse(Buffer body) {
    if (body.length() == 0) {
      return Json.MAPPER.missingNode();
    }
    try {
      return Json.MAPPER.readTree(body.getBytes());
    } catch (java.io.IOException e) {
      return Json.MAPPER.missingNode();
    }
  }
}
