package dev.impipe.fanout;

/**
 * A record the fan-out cannot process. Thrown before anything is forwarded, so the processing exception handler
 * sends the original bytes to the rejected topic (Kafka Streams' dead letter queue) with this message as the reason
 * header, and processing continues.
 */
public class RejectedRecordException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RejectedRecordException(String reason) {
    super(reason, null, false, false);
  }
}
