package dev.impipe.edge.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The token bucket per user and the bound on the users it remembers; the clock is a number the test moves. */
class RateQuotaTest {

  private static final long MS = 1_000_000L;
  private static final long SECOND = 1_000 * MS;
  /** 10 per second, bursts of 3: a token every 100 ms, an empty bucket is full again after 300 ms. */
  private static final Rate RATE = Rate.of(10, Duration.ofSeconds(1), "second", 3);

  @Test
  void anIdleUserMaySendABurstAndThenOneTokenPerInterval() {
    RateQuota quota = new RateQuota(RATE, 100);
    long now = 5 * SECOND; // any start: the clock is monotonic, not wall time

    // Given a user who sent nothing: the burst passes at once
    assertThat(quota.tryTake("alice", now)).isZero();
    assertThat(quota.tryTake("alice", now)).isZero();
    assertThat(quota.tryTake("alice", now)).isZero();
    // When the fourth comes at the same instant: refused, told to wait one interval (100 ms)
    assertThat(quota.tryTake("alice", now)).isEqualTo(100 * MS);
    // Then 60 ms later: 40 ms still to go
    assertThat(quota.tryTake("alice", now + 60 * MS)).isEqualTo(40 * MS);
    // And at 100 ms exactly one passes, the next is refused again
    assertThat(quota.tryTake("alice", now + 100 * MS)).isZero();
    assertThat(quota.tryTake("alice", now + 100 * MS)).isEqualTo(100 * MS);
  }

  @Test
  void aRefusalTakesNothingSoARetryAfterTheWaitPasses() {
    RateQuota quota = new RateQuota(RATE, 100);
    for (int i = 0; i < 3; i++) {
      quota.tryTake("alice", 0);
    }
    // Given alice hammers while empty: 50 refusals within the first 99 ms
    for (int i = 0; i < 50; i++) {
      assertThat(quota.tryTake("alice", i * MS)).isPositive();
    }
    // When she retries after the wait she was told (100 ms): it passes, the refusals did not dig a hole
    assertThat(quota.tryTake("alice", 100 * MS)).isZero();
  }

  @Test
  void theBucketHoldsAtMostTheBurstHoweverLongTheUserWasIdle() {
    RateQuota quota = new RateQuota(RATE, 100);
    quota.tryTake("alice", 0);
    // An hour later: three at once, not 36,000
    long later = 3_600 * SECOND;
    assertThat(quota.tryTake("alice", later)).isZero();
    assertThat(quota.tryTake("alice", later)).isZero();
    assertThat(quota.tryTake("alice", later)).isZero();
    assertThat(quota.tryTake("alice", later)).isPositive();
  }

  @Test
  void oneUserOverTheLimitDoesNotTouchAnother() {
    RateQuota quota = new RateQuota(RATE, 100);
    for (int i = 0; i < 10; i++) {
      quota.tryTake("mallory", 0);
    }
    assertThat(quota.tryTake("mallory", 0)).isPositive();
    assertThat(quota.tryTake("bob", 0)).isZero();
  }

  @Test
  void aRefundGivesBackTheTokenButNeverMoreThanTheBurst() {
    RateQuota quota = new RateQuota(RATE, 100);
    for (int i = 0; i < 3; i++) {
      quota.tryTake("alice", 0);
    }
    quota.refund("alice");
    assertThat(quota.tryTake("alice", 0)).isZero();
    assertThat(quota.tryTake("alice", 0)).isPositive();
    // A refund of a full bucket, or of a user never seen, adds nothing
    quota.refund("bob");
    assertThat(quota.trackedUsers()).isEqualTo(1);
    quota.tryTake("carol", 0);
    quota.refund("carol");
    quota.refund("carol");
    for (int i = 0; i < 3; i++) {
      assertThat(quota.tryTake("carol", 0)).isZero();
    }
    assertThat(quota.tryTake("carol", 0)).isPositive();
  }

  @Test
  void usersWhoseBucketsFilledUpAgainAreForgotten() {
    RateQuota quota = new RateQuota(RATE, 100);
    // Given 50 users each sending once at t = 0 ms
    for (int i = 0; i < 50; i++) {
      quota.tryTake("u" + i, 0);
    }
    assertThat(quota.trackedUsers()).isEqualTo(50);
    // When another sends at 99 ms: the others' buckets are not full yet (one token back at 100 ms)
    quota.tryTake("late", 99 * MS);
    assertThat(quota.trackedUsers()).isEqualTo(51);
    // Then at 100 ms the 50 are full again and forgotten; "late" (at 99 ms) is still refilling
    quota.tryTake("late", 100 * MS);
    assertThat(quota.trackedUsers()).isEqualTo(1);
  }

  @Test
  void oneCallForgetsABoundedNumberOfIdleUsers() {
    RateQuota quota = new RateQuota(RATE, 1_000);
    // Given 200 users seen at t = 0, all idle long enough (1 s) to be forgotten
    for (int i = 0; i < 200; i++) {
      quota.tryTake("u" + i, 0);
    }
    // When one user sends at 1 s: 64 are forgotten in that call, the next call another 64
    quota.tryTake("now", SECOND);
    assertThat(quota.trackedUsers()).isEqualTo(200 - RateQuota.FORGET_PER_CALL + 1);
    quota.tryTake("now", SECOND);
    assertThat(quota.trackedUsers()).isEqualTo(200 - 2 * RateQuota.FORGET_PER_CALL + 1);
  }

  @Test
  void aFloodOfUserIdsNeverHoldsMoreThanTheCapAndTheActiveUserStaysLimited() {
    RateQuota quota = new RateQuota(RATE, 1_000);
    // Given mallory emptied her bucket at t = 0
    for (int i = 0; i < 3; i++) {
      quota.tryTake("mallory", 0);
    }
    // When 100,000 other ids arrive within the same millisecond (none idle long enough to be forgotten)
    for (int i = 0; i < 100_000; i++) {
      quota.tryTake("id-" + i, 0);
      assertThat(quota.trackedUsers()).isLessThanOrEqualTo(1_000);
    }
    // Then the map is at its cap: the least recently seen went first
    assertThat(quota.trackedUsers()).isEqualTo(1_000);
    // And a user seen recently keeps their state (the newest id is still refilling its one send)
    assertThat(quota.tryTake("id-99999", 0)).isZero();
    assertThat(quota.tryTake("id-99999", 0)).isZero();
    assertThat(quota.tryTake("id-99999", 0)).isPositive();
  }

  @Test
  void aRecentlyActiveUserIsNotEvictedByTheCapBeforeOlderOnes() {
    RateQuota quota = new RateQuota(RATE, 3);
    quota.tryTake("a", 0);
    quota.tryTake("b", 0);
    quota.tryTake("c", 0);
    // "a" is used again: now "b" is the least recently seen
    quota.tryTake("a", 0);
    quota.tryTake("d", 0);
    // a has used 2 of 3, so one more passes and then it is refused: its state survived
    assertThat(quota.tryTake("a", 0)).isZero();
    assertThat(quota.tryTake("a", 0)).isPositive();
    // b was evicted: it starts again with a full bucket
    for (int i = 0; i < 3; i++) {
      assertThat(quota.tryTake("b", 0)).isZero();
    }
    assertThat(quota.trackedUsers()).isEqualTo(3);
  }

  @Test
  void anUnlimitedRateTakesNothingAndRemembersNoOne() {
    RateQuota quota = new RateQuota(Rate.of(0, Duration.ofSeconds(1), "second", 1), 10);
    for (int i = 0; i < 1_000; i++) {
      assertThat(quota.tryTake("alice", 0)).isZero();
    }
    assertThat(quota.trackedUsers()).isZero();
  }

  @Test
  void ratesAreReadableAndValidated() {
    assertThat(Rate.of(30, Duration.ofHours(1), "hour", 10).text()).isEqualTo("30 per hour (bursts of 10)");
    assertThat(Rate.of(30, Duration.ofHours(1), "hour", 10).intervalNanos()).isEqualTo(120 * SECOND);
    assertThat(Rate.of(0, Duration.ofHours(1), "hour", 10).unlimited()).isTrue();
    assertThat(RATE.unlimited()).isFalse();
    assertThat(RATE.intervalNanos()).isEqualTo(100 * MS);
    assertThatThrownBy(() -> new Rate(1, 0, "x")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Rate(-1, 1, "x")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Rate.of(-1, Duration.ofSeconds(1), "second", 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new RateQuota(RATE, 0)).isInstanceOf(IllegalArgumentException.class);
    // The smallest cap: one user at a time
    RateQuota single = new RateQuota(RATE, 1);
    single.tryTake("alice", 0);
    single.tryTake("bob", 0);
    assertThat(single.trackedUsers()).isEqualTo(1);
  }

  @Test
  void theLongestSettingsDoNotOverflow() {
    // 1 per day, bursts of 1,000,000 (the settings' extremes: 2,700 years of tokens): an idle user may send
    RateQuota quota = new RateQuota(Rate.of(1, Duration.ofDays(1), "day", 1_000_000), 10);
    long now = Long.MAX_VALUE - 10 * SECOND; // the monotonic clock may be anywhere, even near its wrap
    for (int i = 0; i < 1_000; i++) {
      assertThat(quota.tryTake("alice", now)).isZero();
    }
    // and the clock wrapping past Long.MAX_VALUE changes nothing
    assertThat(quota.tryTake("alice", now + 20 * SECOND)).isZero();
    assertThat(quota.trackedUsers()).isEqualTo(1);
  }
}
