package dev.impipe.delay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The topic cache on a driven clock with listings completed by hand: a miss is final only on a listing less than a
 * second old; otherwise the answer is "not known" and a listing starts, at most one a second.
 */
class AdminTopicCacheTest {

  private final AtomicLong now = new AtomicLong(10_000);
  private final List<CompletableFuture<Set<String>>> listings = new ArrayList<>();
  private final AdminTopicCache cache = new AdminTopicCache(() -> {
    CompletableFuture<Set<String>> listing = new CompletableFuture<>();
    listings.add(listing);
    return listing;
  }, 30_000, now::get);

  @Test
  void unknownUntilTheFirstListingThenAMissIsFinalForOneSecond() {
    // nothing listed yet: not known, and a listing starts
    assertThat(cache.lookup("im.messages")).isNull();
    assertThat(listings).hasSize(1);
    listings.get(0).complete(Set.of("im.messages"));
    assertThat(cache.lookup("im.messages")).isTrue();

    // now: 999 ms after the listing was asked for: a miss is final
    now.addAndGet(999);
    assertThat(cache.lookup("im.other")).isFalse();
    assertThat(cache.test("im.other")).isFalse();
    assertThat(cache.test("im.messages")).isTrue();
    assertThat(listings).hasSize(1);

    // now: one second after: a miss is not known any more, a new listing starts and finds the new topic
    now.addAndGet(1);
    assertThat(cache.lookup("im.other")).isNull();
    assertThat(listings).hasSize(2);
    listings.get(1).complete(Set.of("im.messages", "im.other"));
    assertThat(cache.lookup("im.other")).isTrue();
  }

  @Test
  void aKnownTopicIsListedAgainOnceTheRefreshPeriodIsOver() {
    cache.lookup("im.messages");
    listings.get(0).complete(Set.of("im.messages"));

    now.addAndGet(29_999);
    assertThat(cache.lookup("im.messages")).isTrue();
    assertThat(listings).hasSize(1);
    now.addAndGet(1);
    assertThat(cache.lookup("im.messages")).isTrue();
    assertThat(listings).hasSize(2);
  }

  @Test
  void afterAFailedListingAMissIsUnknownNeverMissingAndWhatWasKnownStays() {
    cache.lookup("im.messages");
    listings.get(0).complete(Set.of("im.messages"));
    now.addAndGet(1_000);
    assertThat(cache.lookup("im.gone")).isNull();
    listings.get(1).completeExceptionally(new TimeoutException("broker down"));

    assertThat(cache.lookup("im.gone")).isNull();
    assertThat(cache.lookup("im.messages")).isTrue();
  }

  @Test
  void aListerThatThrowsIsTriedAgainASecondLater() {
    AtomicInteger calls = new AtomicInteger();
    AdminTopicCache throwing = new AdminTopicCache(() -> {
      calls.incrementAndGet();
      throw new IllegalStateException("admin client closed");
    }, 30_000, now::get);

    assertThat(throwing.lookup("im.messages")).isNull();
    now.addAndGet(999);
    assertThat(throwing.lookup("im.messages")).isNull();
    assertThat(calls).hasValue(1);
    now.addAndGet(1);
    assertThat(throwing.lookup("im.messages")).isNull();
    assertThat(calls).hasValue(2);
  }
}
