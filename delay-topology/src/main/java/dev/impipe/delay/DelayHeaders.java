package dev.impipe.delay;

/** Header names the delay topology writes. */
public final class DelayHeaders {

  /** On a delivered record: the requested delivery time, epoch millis as a decimal UTF-8 string. */
  public static final String SCHEDULED_AT = "im.scheduled-at";
  /** On a rejected record: why it was rejected (UTF-8 text). */
  public static final String REJECT_REASON = "__streams.errors.message";
  /** On a rejected record: which component rejected it ({@code delay}). */
  public static final String REJECT_SOURCE = "im.reject.source";
  /** On a rejected record: the topic it came from ({@code im.delayed}) or was due to go to. */
  public static final String REJECT_TOPIC = "__streams.errors.topic";
  /** On a rejected record: partition and offset it came from (absent when rejected at delivery time). */
  public static final String REJECT_PARTITION = "__streams.errors.partition";
  public static final String REJECT_OFFSET = "__streams.errors.offset";
  /** On a rejected record: the schedule id. */
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
