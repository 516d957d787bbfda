package dev.impipe.notify.provider;

import java.time.Duration;
import java.util.Optional;

/** What a provider answered to one send. */
public sealed interface SendOutcome {

  /** The HTTP status of the answer, 0 when there was none (network error, timeout). */
  int status();

  /** A short reason for logs, metrics and the rejected topic's header. */
  String reason();

  /** Accepted by the provider (2xx). */
  record Delivered(int status) implements SendOutcome {
    @Override
    public String reason() {
      return "delivered";
    }
  }

  /** The subscription or token is gone (404, 410, FCM UNREGISTERED, APNs BadDeviceToken/Unregistered): remove it. */
  record Gone(int status, String reason) implements SendOutcome {}

  /**
   * Worth trying again (429, 5xx, network error, timeout), after {@code retryAfter} when the provider said so
   * ({@code Retry-After}), else after the sender's back-off.
   */
  record Retry(int status, String reason, Optional<Duration> retryAfter) implements SendOutcome {}

  /** Refused for good (other 4xx: a malformed request, a bad credential): goes to the rejected topic at once. */
  record Failed(int status, String reason) implements SendOutcome {}

  /** The outcome of an HTTP status without a provider-specific body (the common case for all providers). */
  static SendOutcome ofStatus(int status, String reason, Optional<Duration> retryAfter) {
    if (status >= 200 && status < 300) {
      return new Delivered(status);
    }
    if (status == 404 || status == 410) {
      return new Gone(status, reason);
    }
    if (status == 429 || status >= 500) {
      return new Retry(status, reason, retryAfter);
    }
    return new Failed(status, reason);
  }
}
