package dev.impipe.push;

import dev.impipe.edge.auth.TokenIssuer;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Response;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * {@code POST /dev/token {"user", "device"?}} -> {@code {"token"}}: anyone may become anyone. Registered only with
 * {@code IM_AUTH_DEV_TOKENS=true} (the local-mode default), so the browser client can sign in without an identity
 * provider; absent (404) otherwise.
 */
final class DevTokens {

  private static final Duration TTL = Duration.ofHours(8);

  /** The request body: exactly these fields. */
  record TokenBody(String user, String device) {}
  private final TokenIssuer issuer;

  DevTokens(TokenIssuer issuer) {
    this.issuer = issuer;
  }

  void register(HttpApi http) {
    http.system("POST", "/dev/token", r -> {
      TokenBody body = r.jsonBody(TokenBody.class);
      String user = body.user() == null ? "" : body.user();
      Optional<String> device = Optional.ofNullable(body.device());
      if (!Ids.valid(user) || device.isPresent() && !Ids.valid(device.get())) {
        throw HttpError.badRequest("user and device are 1-128 letters, digits, '.', '_', '-', '@'");
      }
      return Response.json(200, Map.of("token", issuer.issue(user, device, TTL), "user", user,
          "expiresInSeconds", TTL.toSeconds()));
    });
  }
}
