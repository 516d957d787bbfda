package dev.impipe.delay;

/** Header names the delay topology reads and writes, besides the rejected-record ones (runtime). */
public final class DelayHeaders {

  /** On a delivered record: the requested delivery time, epoch millis as a decimal UTF-8 string. */
  public static final String SCHEDULED_AT = "im.scheduled-at";
  /**
   * On a rejected record the topology wrote itself (undecodable in its store, or undeliverable at delivery time):
   * the schedule id. The reason headers are those of every rejected record ({@code RejectedHeaders} in runtime).
   */
  public static final String SCHEDULE_ID = "im.schedule-id";

  /**
   * On a SCHEDULE command (and so on the delivered record): the user who scheduled it, UTF-8. Set by
   * {@link ScheduledMessages#schedule}; a CANCEL that names a requester is honoured only from this user.
   */
  public static final String SENDER = "im.sender";
  /**
   * On a CANCEL command: the user asking, UTF-8. Absent = an operator writing to the topic directly (Kafka ACLs
   * protect it): honoured unconditionally.
   */
  public static final String REQUESTER = "im.requester";

  private DelayHeaders() {}
}
