package dev.impipe.runtime.auth;

/** A bearer token was refused; the message says why in words safe to show to the client (answered 401). */
public final class AuthException extends Exception {
  private static final long serialVersionUID = 1L;

  public AuthException(String message) {
    super(message);
  }

  public AuthException(String message, Throwable cause) {
    super(message, cause);
  }
}
