package dev.impipe.delay.internal;

import dev.impipe.delay.TopicLookup;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "Does this topic exist?" from the broker's topic list, refreshed in the background (never inside a punctuation):
 * every {@code refreshMs}, and at most once a second when asked about a topic the list does not hold, so a topic
 * created a moment ago is found. A topic is reported missing only by a successful listing less than a second old;
 * before the first successful listing, after a failed one, or while a miss waits for a fresh list the answer is
 * "not known" ({@code null}): the caller retries later and never rejects a schedule because the broker could not be
 * asked.
 */
public final class AdminTopicCache implements TopicLookup {

  private static final Logger LOG = LoggerFactory.getLogger(AdminTopicCache.class);
  static final long MISS_REFRESH_MS = 1_000;
  private static final int TIMEOUT_MS = 5_000;

  private final Supplier<CompletionStage<Set<String>>> lister;
  private final long refreshMs;
  private final LongSupplier clock;
  private Set<String> known = Set.of();
  /** When the last successful listing was asked for; MIN_VALUE before the first. */
  private long okAt = Long.MIN_VALUE;
  private boolean lastFailed;
  private long attemptAt = Long.MIN_VALUE;
  private boolean inFlight;

  public AdminTopicCache(Admin admin, long refreshMs, LongSupplier clock) {
    this(() -> admin.listTopics(new ListTopicsOptions().timeoutMs(TIMEOUT_MS)).names().toCompletionStage(),
        refreshMs, clock);
  }

  /** With any asynchronous topic lister (tests). */
  public AdminTopicCache(Supplier<CompletionStage<Set<String>>> lister, long refreshMs, LongSupplier clock) {
    this.lister = lister;
    this.refreshMs = refreshMs;
    this.clock = clock;
  }

  @Override
  public synchronized Boolean lookup(String topic) {
    long now = clock.getAsLong();
    boolean fresh = okAt != Long.MIN_VALUE && now - okAt < MISS_REFRESH_MS && !lastFailed;
    if (known.contains(topic)) {
      if (okAt == Long.MIN_VALUE || now - okAt >= refreshMs) {
        refresh(now);
      }
      return Boolean.TRUE;
    }
    if (fresh) {
      return Boolean.FALSE;
    }
    refresh(now);
    return null;
  }

  /** Starts a listing unless one is running or one started less than a second ago. */
  private void refresh(long now) {
    if (inFlight || (attemptAt != Long.MIN_VALUE && now - attemptAt < MISS_REFRESH_MS)) {
      return;
    }
    inFlight = true;
    attemptAt = now;
    CompletionStage<Set<String>> listing;
    try {
      listing = lister.get();
    } catch (RuntimeException e) {
      done(now, null, e);
      return;
    }
    listing.whenComplete((names, error) -> done(now, names, error));
  }

  private synchronized void done(long askedAt, Set<String> names, Throwable error) {
    inFlight = false;
    if (error != null || names == null) {
      lastFailed = true;
      LOG.warn("Cannot list topics, keeping the last known {} (unknown topics are retried, never rejected): {}",
          known.size(), String.valueOf(error));
      return;
    }
    known = Set.copyOf(names);
    okAt = askedAt;
    lastFailed = false;
  }
}
