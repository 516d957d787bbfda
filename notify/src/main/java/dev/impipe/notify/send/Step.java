package dev.impipe.notify.send;

import java.time.Duration;

/** What the sender does with a notification after a provider's answer ({@link OutcomePolicy}). */
public sealed interface Step {

  /** Finished: the offset may be committed. */
  record Done() implements Step {}

  /** The registration is gone: write its removal to the registrations topic, then finished. */
  record RemoveRegistration(String reason) implements Step {}

  /** Send again after {@code delay} (the record waits in the delay queue, not in the poll loop). */
  record RetryIn(Duration delay) implements Step {}

  /** Give up: the record goes to the rejected topic with {@code code} and {@code reason}, then finished. */
  record Reject(String code, String reason) implements Step {}
}
