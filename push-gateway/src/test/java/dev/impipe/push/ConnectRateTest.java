package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Socket opens per user: a burst, then the refill rate; other users keep theirs; memory stays bounded. */
class ConnectRateTest {

  private final AtomicLong clock = new AtomicLong(1_000);

  @Test
  void aBurstIsAllowedThenOpensWaitForTheRefill() {
    // Given 30 opens a minute, bursts of 3
    ConnectRate rate = new ConnectRate(30, 3, 100, clock::get);

    // When alice opens three sockets at once, then a fourth
    assertThat(rate.tryOpen("alice")).isZero();
    assertThat(rate.tryOpen("alice")).isZero();
    assertThat(rate.tryOpen("alice")).isZero();

    // Then the fourth waits for one token: 2 s at 30 a minute; bob is not affected
    assertThat(rate.tryOpen("alice")).isEqualTo(2);
    assertThat(rate.tryOpen("bob")).isZero();

    // 1 s later (half a token) alice still waits 1 s; 2 s later she may open one
    clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
    assertThat(rate.tryOpen("alice")).isEqualTo(1);
    clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
    assertThat(rate.tryOpen("alice")).isZero();
    assertThat(rate.tryOpen("alice")).isEqualTo(2);
  }

  @Test
  void aFloodOfUserIdsNeverGrowsPastTheBound() {
    // Given room for 50 users
    ConnectRate rate = new ConnectRate(30, 3, 50, clock::get);

    // When 10,000 different users open one socket each, at the same instant
    for (int i = 0; i < 10_000; i++) {
      assertThat(rate.tryOpen("u" + i)).isZero();
    }

    // Then at most 50 are tracked
    assertThat(rate.users()).isLessThanOrEqualTo(50);
  }

  @Test
  void aUserWhoseBucketRefilledIsForgottenFirst() {
    // Given room for 2 users: alice used her whole burst, bob one open
    ConnectRate rate = new ConnectRate(60, 2, 2, clock::get);
    rate.tryOpen("alice");
    rate.tryOpen("alice");
    rate.tryOpen("bob");

    // When 1.5 s pass (bob's bucket is full again, alice's is not) and carol opens
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1_500));
    assertThat(rate.tryOpen("carol")).isZero();

    // Then bob was forgotten and alice's state kept: her next open is allowed (1.5 tokens), the one after is not
    assertThat(rate.users()).isEqualTo(2);
    assertThat(rate.tryOpen("alice")).isZero();
    assertThat(rate.tryOpen("alice")).isEqualTo(1);
  }

  @Test
  void boundsMustBePositive() {
    assertThatThrownBy(() -> new ConnectRate(0, 1, 1, clock::get)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConnectRate(1, 0, 1, clock::get)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConnectRate(1, 1, 0, clock::get)).isInstanceOf(IllegalArgumentException.class);
  }
}
