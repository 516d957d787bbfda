package dev.impipe.edge.quota;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One {@link Rate} applied per user, in bounded memory: a user whose bucket has filled up again is forgotten (a full
 * bucket and no bucket are the same), and at most {@code maxUsers} buckets are kept; beyond that the least recently
 * used goes (that user starts again with a full bucket, the only way a flood of user ids can gain anything). Each
 * instance keeps its own buckets. Thread-safe: one short lock per call.
 */
public final class RateQuota {

  /** Most idle users one call forgets: a call after a quiet spell stays short, the cap bounds the rest. */
  static final int FORGET_PER_CALL = 64;

  private final Rate rate;
  private final int maxUsers;
  /** Access-ordered: the eldest entry is the user seen least recently. */
  private final LinkedHashMap<String, TokenBucket> buckets = new LinkedHashMap<>(16, 0.75f, true);

  public RateQuota(Rate rate, int maxUsers) {
    if (maxUsers < 1) {
      throw new IllegalArgumentException("maxUsers must be at least 1");
    }
    this.rate = rate;
    this.maxUsers = maxUsers;
  }

  public Rate rate() {
    return rate;
  }

  /** Takes one of {@code user}'s tokens: 0 when taken, else the nanoseconds until one is there (nothing taken). */
  public synchronized long tryTake(String user, long nowNanos) {
    if (rate.unlimited()) {
      return 0;
    }
    forgetIdle(nowNanos);
    TokenBucket bucket = buckets.get(user);
    if (bucket == null) {
      if (buckets.size() >= maxUsers) {
        Iterator<TokenBucket> eldest = buckets.values().iterator();
        eldest.next();
        eldest.remove();
      }
      bucket = new TokenBucket(nowNanos);
      buckets.put(user, bucket);
    }
    return bucket.tryTake(rate, nowNanos);
  }

  /** Gives back the token {@link #tryTake} just took from {@code user}. */
  public synchronized void refund(String user) {
    TokenBucket bucket = buckets.get(user);
    if (bucket != null) {
      bucket.refund(rate);
    }
  }

  /** Users with a bucket now (a gauge). */
  public synchronized int trackedUsers() {
    return buckets.size();
  }

  /**
   * Drops the least recently seen users while their buckets are full again, at most {@link #FORGET_PER_CALL}; it
   * stops at the first user still refilling. A call adds at most one user, so idle ones never pile up.
   */
  private void forgetIdle(long nowNanos) {
    Iterator<Map.Entry<String, TokenBucket>> it = buckets.entrySet().iterator();
    for (int i = 0; i < FORGET_PER_CALL && it.hasNext(); i++) {
      if (!it.next().getValue().full(nowNanos)) {
        return;
      }
      it.remove();
    }
  }
}
