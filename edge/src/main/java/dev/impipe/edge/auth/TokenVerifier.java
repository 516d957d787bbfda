package dev.impipe.edge.auth;

import java.util.Locale;
import java.util.Optional;

/**
 * Verifies a bearer token and says who it belongs to. Implementations must be thread-safe; {@link #verify} may
 * block briefly (a JWKS fetch on a key it has not seen), so callers run it off event-loop threads.
 */
@FunctionalInterface
public interface TokenVerifier {

  /**
   * @param token the bearer token, without the {@code Bearer } prefix
   * @return the principal the token names
   * @throws AuthException when the token is missing, malformed, expired, badly signed or not for this service;
   *     its message is safe to show to the client
   */
  Principal verify(String token) throws AuthException;

  /**
   * The token of an {@code Authorization} header value {@code Bearer <token>} (scheme case-insensitive, RFC 6750);
   * empty when the header is absent, blank or of another scheme.
   */
  static Optional<String> bearerToken(String authorization) {
    if (authorization == null) {
      return Optional.empty();
    }
    String value = authorization.strip();
    if (value.length() <= 7 || !value.substring(0, 7).toLowerCase(Locale.ROOT).equals("bearer ")) {
      return Optional.empty();
    }
    String token = value.substring(7).strip();
    return token.isEmpty() ? Optional.empty() : Optional.of(token);
  }
}
