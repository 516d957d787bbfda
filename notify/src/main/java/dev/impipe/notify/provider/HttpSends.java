package dev.impipe.notify.provider;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/** The providers' one way to send: an answer becomes an outcome, a network error or timeout a retry. */
final class HttpSends {

  private HttpSends() {}

  static CompletableFuture<SendOutcome> send(HttpClient http, HttpRequest request,
      Function<HttpResponse<String>, SendOutcome> outcome) {
    try {
      return http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenApply(outcome)
          .exceptionally(HttpSends::ofError);
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(ofError(e));
    }
  }

  static SendOutcome ofError(Throwable error) {
    Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (cause instanceof HttpTimeoutException) {
      return new SendOutcome.Retry(0, "timeout", Optional.empty());
    }
    if (cause instanceof java.io.IOException) {
      return new SendOutcome.Retry(0, "network error: " + cause.getClass().getSimpleName(), Optional.empty());
    }
    return new SendOutcome.Failed(0, "send failed: " + cause.getClass().getSimpleName() + ": " + cause.getMessage());
  }

  /** The answer's Retry-After, read at {@code clock}'s now. */
  static Optional<Duration> retryAfter(HttpResponse<?> response, Clock clock) {
    return RetryAfter.parse(response.headers().firstValue("Retry-After").orElse(null), clock.instant());
  }

  /** A reason for people: the status and the first characters of the body. */
  static String reason(HttpResponse<String> response) {
    String body = response.body() == null ? "" : response.body().strip();
    return "HTTP " + response.statusCode() + (body.isEmpty() ? "" : ": " + body.substring(0, Math.min(200,
        body.length())));
  }
}
