package dev.impipe.cli;

/** A user error on the command line: printed without a stack trace, exit status 2. */
public class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CliException(String message) {
    super(message);
  }
}
