package dev.impipe.edge.http;

/**
 * What an error answer may tell the client. A 4xx message is written for the client and kept. A 5xx message may
 * carry internal detail (a store, a partition, an offset, a Kafka exception's text): only its lead, up to the first
 * {@code ": "}, is answered ({@code "not available, retry: store x of partition 3 ..."} answers
 * {@code "not available, retry"}); the whole message goes to the log under the answer's correlation id.
 */
final class ErrorBodies {

  /** A 5xx message longer than this is replaced by the generic one. */
  static final int MAX_PUBLIC_LENGTH = 120;

  private ErrorBodies() {}

  /** The message to answer for {@code status}. */
  static String publicMessage(int status, String message) {
    if (status < 500) {
      return message == null ? "error" : message;
    }
    String lead = message == null ? "" : message;
    int colon = lead.indexOf(": ");
    if (colon >= 0) {
      lead = lead.substring(0, colon);
    }
    lead = lead.strip();
    if (lead.isEmpty() || lead.length() > MAX_PUBLIC_LENGTH || lead.contains("Exception")) {
      return generic(status);
    }
    return lead;
  }

  /** Whether the answered message leaves out part of {@code message} (then the whole is logged). */
  static boolean redacted(int status, String message) {
    return status >= 500 && !publicMessage(status, message).equals(message);
  }

  static String generic(int status) {
    return switch (status) {
      case 503 -> "temporarily unavailable, retry";
      case 504 -> "timed out, retry";
      default -> "internal error";
    };
  }
}
