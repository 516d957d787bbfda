package dev.impipe.inbox.query;

/** The local instance cannot answer for a partition right now: it does not own it, or it is behind a bound. */
public final class NotServableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why the local instance cannot answer. */
  public enum Reason {
    /** The partition is not an active, running task here (another instance owns it, or a rebalance moves it). */
    NOT_OWNER,
    /** The partition is here but its store has not yet applied the position asked for ({@code minSeq}). */
    BEHIND
  }

  private final Reason reason;

  public NotServableException(Reason reason, String message) {
    super(message, null, false, false);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
