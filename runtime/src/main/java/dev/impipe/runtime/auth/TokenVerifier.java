package dev.impipe.runtime.auth;

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
}
