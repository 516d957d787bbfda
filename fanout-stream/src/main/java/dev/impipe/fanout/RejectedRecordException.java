package dev.impipe.fanout;

/**
 * A record the fan-out cannot process or refuses. The processing exception handler sends the original bytes to the
 * rejected topic (Kafka Streams' dead letter queue) with this message as the reason header, and processing
 * continues.
 *
 * <p>Thrown before any fan-out output. The one thing a processor forwards before throwing is a refusal's REJECTED
 * entry to the actor's inbox: a forward is handed to the task's producer at once, and the handler's dead letter goes
 * through the same producer, so under exactly-once both commit in one transaction, or neither does if the task
 * fails. That keeps the dead letter exactly as Kafka Streams writes it (original bytes, same headers), which a
 * processor could not rebuild: it never sees the source bytes.
 */
public class RejectedRecordException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RejectedRecordException(String reason) {
    super(reason, null, false, false);
  }
}
