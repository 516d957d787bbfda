package dev.impipe.runtime.topics;

/** A topic could not be created or does not look as the pipeline needs. */
public class TopicMismatchException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public TopicMismatchException(String message) {
    super(message);
  }
}
