package dev.impipe.ingest;

/** The request breaks a rule; nothing was published. The message says which rule. */
public class InvalidRequestException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public InvalidRequestException(String message) {
    super(message);
  }
}
