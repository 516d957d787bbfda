package dev.impipe.inbox.http;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts, per user, the requests waiting at once (for {@code minSeq}/{@code groupMinSeq}, a rebalance, an owner)
 * and refuses one more beyond {@code max}: one user's waits cannot fill the instance's timers and workers.
 */
final class WaitingLimiter {

  private final int max;
  private final ConcurrentHashMap<String, Integer> waiting = new ConcurrentHashMap<>();

  WaitingLimiter(int max) {
    if (max <= 0) {
      throw new IllegalArgumentException("max must be positive");
    }
    this.max = max;
  }

  /** Takes a waiting slot of {@code user}; false (nothing taken) when the user already has {@code max}. */
  boolean tryAcquire(String user) {
    boolean[] taken = {false};
    waiting.compute(user, (k, n) -> {
      int now = n == null ? 0 : n;
      if (now >= max) {
        return n;
      }
      taken[0] = true;
      return now + 1;
    });
    return taken[0];
  }

  /** Gives back a slot taken by {@link #tryAcquire}. */
  void release(String user) {
    waiting.computeIfPresent(user, (k, n) -> n <= 1 ? null : n - 1);
  }

  /**
   * True when {@code user} already has {@code max} requests waiting: a new request of theirs is refused before it
   * does any work (a store read, a page decoded), so a user who keeps retrying at the bound costs almost nothing.
   */
  boolean full(String user) {
    return waiting(user) >= max;
  }

  /** The requests of {@code user} waiting now. */
  int waiting(String user) {
    return waiting.getOrDefault(user, 0);
  }

  /** Users with at least one waiting request (the map never keeps a user with none). */
  int users() {
    return waiting.size();
  }

  int max() {
    return max;
  }
}
