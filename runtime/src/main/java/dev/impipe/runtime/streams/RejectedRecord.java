package dev.impipe.runtime.streams;

import java.util.regex.Pattern;

/**
 * Bad input: the one way a topology rejects the record it is processing (malformed, in the wrong partition, or an
 * actor's request the rules refuse). Thrown from {@code Processor#process}; the pipeline's processing exception
 * handler ({@code dev.impipe.runtime.app.DeadLetterProcessingExceptionHandler}) writes the input record, key and value
 * bytes as they came, to the rejected topic with the reason in {@link RejectedHeaders}, and the task goes on with the
 * next record. Any other exception is a bug or an outage and fails the stream thread: never wrap one in this type.
 *
 * <p>Throw it before forwarding anything, except what must accompany the refusal (a REJECTED inbox entry for the
 * actor): a forward goes to the task's producer at once and the dead letter through the same producer, so under
 * exactly-once both commit in one transaction, or neither does if the task fails. The dead letter is written by the
 * handler because only it sees the source bytes; a processor cannot rebuild them.
 */
public final class RejectedRecord extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private static final Pattern CODE = Pattern.compile("[A-Z][A-Z0-9_]*");

  /** The reason code of a malformed record (no key, wrong key, missing or invalid field). */
  public static final String INVALID = "INVALID";

  private final String code;
  private final String source;

  /** A rejection with a machine-readable {@code code} ({@code UPPER_SNAKE}) and a {@code reason} for people. */
  public RejectedRecord(String code, String reason) {
    this(code, reason, null);
  }

  /** As {@link #RejectedRecord(String, String)}, naming the component that rejects it ({@code delay}), or null. */
  public RejectedRecord(String code, String reason, String source) {
    // No stack trace: a rejection is an expected outcome, thrown per bad record, and the trace would say nothing.
    super(reason, null, false, false);
    if (code == null || !CODE.matcher(code).matches()) {
      throw new IllegalArgumentException("a rejection code is UPPER_SNAKE, not '" + code + "'");
    }
    this.code = code;
    this.source = source;
  }

  /** A malformed record: {@link #INVALID} with {@code reason}. */
  public static RejectedRecord invalid(String reason) {
    return new RejectedRecord(INVALID, reason);
  }

  /** The machine-readable reason code ({@link RejectedHeaders#CODE}). */
  public String code() {
    return code;
  }

  /** The reason for people ({@link RejectedHeaders#MESSAGE}). */
  public String reason() {
    return getMessage();
  }

  /** The component that rejected it ({@link RejectedHeaders#SOURCE}), or null. */
  public String source() {
    return source;
  }
}
