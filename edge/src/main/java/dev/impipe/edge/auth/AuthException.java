package dev.impipe.edge.auth;

/**
 * A bearer token was refused (answered 401), or could not be checked right now (answered 503: the identity
 * provider's keys are unreachable, which says nothing against the token); the message says why in words safe to
 * show to the client.
 */
public final class AuthException extends Exception {
  private static final long serialVersionUID = 1L;

  private final boolean temporary;

  public AuthException(String message) {
    super(message);
    this.temporary = false;
  }

  public AuthException(String message, Throwable cause) {
    this(message, cause, false);
  }

  /** @param temporary true when the token could not be checked now (retry later), not found bad */
  public AuthException(String message, Throwable cause, boolean temporary) {
    super(message, cause);
    this.temporary = temporary;
  }

  /** True when the token could not be checked right now; the client should retry, not sign in again. */
  public boolean temporary() {
    return temporary;
  }
}
