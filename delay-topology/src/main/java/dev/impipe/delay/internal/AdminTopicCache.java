package dev.impipe.delay.internal;

import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "Does this topic exist?" from the broker's topic list, fetched at most every {@code refreshMs}, or sooner (at
 * most once a second) when asked about a topic it has not seen — so a topic created a moment ago is found, and a
 * flood of schedules for a missing topic costs one lookup a second, not one per record.
 */
public final class AdminTopicCache implements Predicate<String> {

  private static final Logger LOG = LoggerFactory.getLogger(AdminTopicCache.class);
  private static final long MISS_REFRESH_MS = 1_000;
  private static final int TIMEOUT_MS = 5_000;

  private final Admin admin;
  private final long refreshMs;
  private final LongSupplier clock;
  private Set<String> known = Set.of();
  private long fetchedAt;
  private boolean fetched;

  public AdminTopicCache(Admin admin, long refreshMs, LongSupplier clock) {
    this.admin = admin;
    this.refreshMs = refreshMs;
    this.clock = clock;
  }

  @Override
  public synchronized boolean test(String topic) {
    long now = clock.getAsLong();
    long age = now - fetchedAt;
    if (!fetched || age >= refreshMs || (!known.contains(topic) && age >= MISS_REFRESH_MS)) {
      refresh(now);
    }
    return known.contains(topic);
  }

  private void refresh(long now) {
    try {
      known = Set.copyOf(admin.listTopics(new ListTopicsOptions().timeoutMs(TIMEOUT_MS)).names()
          .get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // Keep the last known list: a broker hiccup must not turn every schedule into a rejection.
      LOG.warn("Cannot list topics, keeping the last known {} topics: {}", known.size(), e.toString());
    }
    fetched = true;
    fetchedAt = now;
  }
}
