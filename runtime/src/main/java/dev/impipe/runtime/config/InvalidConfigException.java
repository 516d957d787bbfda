package dev.impipe.runtime.config;

/** A configuration value is missing or malformed; the message names the environment variable. */
public class InvalidConfigException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public InvalidConfigException(String message) {
    super(message);
  }
}
