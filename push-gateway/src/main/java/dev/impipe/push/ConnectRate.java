package dev.impipe.push;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * How often one user may open a socket on this instance: a token bucket per user holding {@code burst} opens and
 * refilled at {@code perMinute}. Each open costs the gateway a backlog read before anything else (a page of up to
 * the socket's write budget); the socket cap alone bounds the sockets a user holds, not how many backlog reads a
 * user who opens and drops sockets in a loop causes. Memory is bounded: a user whose bucket has refilled is
 * forgotten, and beyond {@code maxUsers} tracked users the full buckets are swept first, then the oldest entries
 * (which start again with a full bucket). Pure: time comes from the clock it is given.
 */
final class ConnectRate {

  private static final long MINUTE = 60_000_000_000L;

  private final double perMinute;
  private final double burst;
  private final int maxUsers;
  private final LongSupplier nanos;
  private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

  private static final class Bucket {
    double tokens;
    long at;

    Bucket(double tokens, long at) {
      this.tokens = tokens;
      this.at = at;
    }
  }

  ConnectRate(int perMinute, int burst, int maxUsers, LongSupplier nanos) {
    if (perMinute <= 0 || burst <= 0 || maxUsers <= 0) {
      throw new IllegalArgumentException("rate, burst and users must be positive");
    }
    this.perMinute = perMinute;
    this.burst = burst;
    this.maxUsers = maxUsers;
    this.nanos = nanos;
  }

  /**
   * Takes one open of {@code user}'s allowance: 0 when allowed, else the whole seconds until one is (the
   * {@code Retry-After}; at least 1).
   */
  long tryOpen(String user) {
    long now = nanos.getAsLong();
    if (buckets.size() >= maxUsers && !buckets.containsKey(user)) {
      sweep(now);
    }
    long[] wait = {0};
    buckets.compute(user, (u, b) -> {
      Bucket bucket = b == null ? new Bucket(burst, now) : b;
      bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) * perMinute / MINUTE);
      bucket.at = now;
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
      } else {
        wait[0] = Math.max(1, (long) Math.ceil((1 - bucket.tokens) * 60 / perMinute));
      }
      return bucket;
    });
    return wait[0];
  }

  /** Users tracked now. */
  int users() {
    return buckets.size();
  }

  /** Forgets users whose bucket has refilled; if that frees nothing, drops entries until under the bound. */
  private void sweep(long now) {
    buckets.entrySet().removeIf(e -> e.getValue().tokens + (now - e.getValue().at) * perMinute / MINUTE >= burst);
    Iterator<String> it = buckets.keySet().iterator();
    while (buckets.size() >= maxUsers && it.hasNext()) {
      it.next();
      it.remove();
    }
  }
}
