package dev.impipe.push;

import java.util.function.LongSupplier;

/**
 * What one device may send on its socket: frames of at most {@link Limits#maxFrameBytes()}, at most
 * {@link Limits#framesPerSecond()} frames a second (a token bucket holding two seconds' worth, so a device ACKing a
 * backlog entry by entry is not cut off), and at most {@link Limits#maxInflightSends()} {@code send} frames not yet
 * answered. Pure: time comes from the clock it is given.
 */
final class FrameLimiter {

  /** The bounds, from {@link PushConfig}. */
  record Limits(int maxFrameBytes, int framesPerSecond, int maxInflightSends) {}

  /** What to do with a frame. */
  enum Verdict { ACCEPT, TOO_LARGE, TOO_FAST }

  private static final long SECOND = 1_000_000_000L;

  private final Limits limits;
  private final LongSupplier nanos;
  private final double capacity;
  private double tokens;
  private long refilledAt;
  private int sends;

  FrameLimiter(Limits limits, LongSupplier nanos) {
    this.limits = limits;
    this.nanos = nanos;
    this.capacity = 2.0 * limits.framesPerSecond();
    this.tokens = capacity;
    this.refilledAt = nanos.getAsLong();
  }

  /** A frame of {@code bytes} arrived: accepted, or why the socket is closed. */
  synchronized Verdict frame(int bytes) {
    if (bytes > limits.maxFrameBytes()) {
      return Verdict.TOO_LARGE;
    }
    long now = nanos.getAsLong();
    tokens = Math.min(capacity, tokens + (now - refilledAt) * (double) limits.framesPerSecond() / SECOND);
    refilledAt = now;
    if (tokens < 1) {
      return Verdict.TOO_FAST;
    }
    tokens -= 1;
    return Verdict.ACCEPT;
  }

  /** Takes a slot for a {@code send}; false when {@link Limits#maxInflightSends()} are unanswered already. */
  synchronized boolean startSend() {
    if (sends >= limits.maxInflightSends()) {
      return false;
    }
    sends++;
    return true;
  }

  /** A {@code send} was answered: its slot is free. */
  synchronized void endSend() {
    sends = Math.max(0, sends - 1);
  }

  Limits limits() {
    return limits;
  }
}
