package dev.impipe.edge.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@link HttpApi#routes()}: what the API description is checked against lists every kind of route. */
class HttpApiRoutesTest {

  @Test
  void listsEveryRegisteredRouteAsMethodAndPattern() {
    // Given a server with a worker, an asynchronous, a system and a probe route and a WebSocket path
    try (HttpApi api = new HttpApi("127.0.0.1", 0)) {
      api.route("get", "/v1/users/{userId}/inbox", r -> Response.empty(200));
      api.routeAsync("PUT", "v1/users/{userId}/devices/{deviceId}/cursor", r -> null);
      api.system("GET", "/", r -> Response.empty(200));
      api.probe("GET", "/health", r -> Response.empty(200));
      api.webSocket("/v1/ws", r -> ws -> {});

      // When the routes are listed, Then each is there once, method upper-case, pattern with one leading slash
      assertThat(api.routes()).containsExactly("GET /v1/users/{userId}/inbox",
          "PUT /v1/users/{userId}/devices/{deviceId}/cursor", "GET /", "GET /health", "GET /v1/ws");
    }
  }
}
