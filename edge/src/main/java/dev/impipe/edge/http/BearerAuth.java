package dev.impipe.edge.http;

import dev.impipe.edge.auth.AuthException;
import dev.impipe.edge.auth.Principal;
import dev.impipe.edge.auth.TokenVerifier;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may reach a route: the guards (checks by path prefix, e.g. a Host allow-list) and the bearer token of routes
 * under the authenticated prefix. Both see the one normal form of the path the router matched.
 */
final class BearerAuth {

  private static final Logger LOG = LoggerFactory.getLogger(BearerAuth.class);

  private record Guard(String prefix, Consumer<Request> check) {}

  private final List<Guard> guards = new CopyOnWriteArrayList<>();
  private volatile String prefix;
  private volatile TokenVerifier verifier;

  void require(String authPrefix, TokenVerifier tokenVerifier) {
    this.prefix = authPrefix;
    this.verifier = tokenVerifier;
  }

  void guard(String guardPrefix, Consumer<Request> check) {
    guards.add(new Guard(guardPrefix, check));
  }

  /** The request as a handler of a {@code kind} route sees it: guarded, and with its caller when it needs a token. */
  Request admit(RouteKind kind, Request request) {
    guarded(request);
    TokenVerifier v = verifier;
    String p = prefix;
    if (kind != RouteKind.WORKER || v == null || p == null || !request.path().startsWith(p)) {
      return request;
    }
    return withCaller(request, v, false);
  }

  /** The request of a WebSocket upgrade, guarded and with its caller (a token is always needed there). */
  Request admitUpgrade(Request request) {
    TokenVerifier v = verifier;
    if (v == null) {
      throw HttpError.unauthorized("a bearer token is required");
    }
    guarded(request);
    return withCaller(request, v, true);
  }

  private void guarded(Request request) {
    for (Guard g : guards) {
      if (request.path().startsWith(g.prefix())) {
        g.check().accept(request);
      }
    }
  }

  /**
   * The request with its verified caller. The token comes from {@code Authorization: Bearer}; only on a WebSocket
   * upgrade ({@code upgrade}) also from {@code ?access_token=}, since browsers cannot set headers there. Everywhere
   * else a query token is ignored: it would end up in access logs and browser history.
   */
  private static Request withCaller(Request request, TokenVerifier v, boolean upgrade) {
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
}
