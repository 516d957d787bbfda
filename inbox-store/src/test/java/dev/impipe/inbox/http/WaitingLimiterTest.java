package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** One user's waiting requests are bounded; other users are not affected; a slot given back is free again. */
class WaitingLimiterTest {

  @Test
  void aUserGetsAtMostMaxSlotsOthersStillGetTheirs() {
    // Given a bound of 2
    WaitingLimiter limiter = new WaitingLimiter(2);

    // When alice takes two and asks for a third
    assertThat(limiter.tryAcquire("alice")).isTrue();
    assertThat(limiter.tryAcquire("alice")).isTrue();

    // Then the third is refused and nothing more is counted; bob still gets his
    assertThat(limiter.tryAcquire("alice")).isFalse();
    assertThat(limiter.waiting("alice")).isEqualTo(2);
    assertThat(limiter.tryAcquire("bob")).isTrue();

    // and once one of alice's is answered she may wait again
    limiter.release("alice");
    assertThat(limiter.tryAcquire("alice")).isTrue();
  }

  @Test
  void aUserAtTheBoundIsFullOthersAndTheUserBelowItAreNot() {
    // Given a bound of 2 and alice waiting once
    WaitingLimiter limiter = new WaitingLimiter(2);
    limiter.tryAcquire("alice");
    assertThat(limiter.full("alice")).isFalse();

    // When she waits a second time
    limiter.tryAcquire("alice");

    // Then she is full (her next request is refused before any work); bob is not
    assertThat(limiter.full("alice")).isTrue();
    assertThat(limiter.full("bob")).isFalse();
    limiter.release("alice");
    assertThat(limiter.full("alice")).isFalse();
  }

  @Test
  void aUserWithNothingWaitingIsNotKept() {
    WaitingLimiter limiter = new WaitingLimiter(4);
    limiter.tryAcquire("alice");
    limiter.release("alice");
    limiter.release("alice"); // an extra release is a no-op
    assertThat(limiter.waiting("alice")).isZero();
    assertThat(limiter.users()).isZero();
  }

  @Test
  void concurrentAcquiresNeverExceedTheBound() throws Exception {
    WaitingLimiter limiter = new WaitingLimiter(4);
    java.util.concurrent.atomic.AtomicInteger granted = new java.util.concurrent.atomic.AtomicInteger();
    java.util.List<Thread> threads = new java.util.ArrayList<>();
    for (int i = 0; i < 16; i++) {
      Thread t = new Thread(() -> {
        for (int j = 0; j < 100; j++) {
          if (limiter.tryAcquire("alice")) {
            granted.incrementAndGet();
          }
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(granted.get()).isEqualTo(4);
  }
}
