package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PunctuationBudgetTest {

  private final AtomicLong nanos = new AtomicLong();

  @Test
  void tasksOfOneThreadShareTheRecordsOfAWindow() {
    PunctuationBudget budget = new PunctuationBudget(10, 1_000, 100, nanos::get);
    // now = 1000: task 1 takes 7 of 10, task 2 (same thread, same window) gets only the 3 left.
    try (PunctuationBudget.Lease task1 = budget.lease(1_000)) {
      assertThat(takeAll(task1, 7)).isEqualTo(7);
    }
    try (PunctuationBudget.Lease task2 = budget.lease(1_005)) {
      assertThat(takeAll(task2, 100)).isEqualTo(3);
      assertThat(task2.exhausted()).isTrue();
    }
    assertThat(budget.remainingRecords()).isZero();
    // now = 1100: a new window, the full budget again.
    try (PunctuationBudget.Lease next = budget.lease(1_100)) {
      assertThat(takeAll(next, 100)).isEqualTo(10);
    }
  }

  @Test
  void anotherThreadHasItsOwnWindow() throws InterruptedException {
    PunctuationBudget budget = new PunctuationBudget(10, 1_000, 100, nanos::get);
    try (PunctuationBudget.Lease here = budget.lease(0)) {
      takeAll(here, 100);
    }
    long[] taken = new long[1];
    Thread other = new Thread(() -> {
      try (PunctuationBudget.Lease there = budget.lease(0)) {
        taken[0] = takeAll(there, 100);
      }
    });
    other.start();
    other.join();
    assertThat(taken[0]).isEqualTo(10);
  }

  @Test
  void timeSpentByEarlierPunctuationsCountsAgainstTheWindow() {
    PunctuationBudget budget = new PunctuationBudget(1_000_000, 50, 100, nanos::get);
    try (PunctuationBudget.Lease first = budget.lease(0)) {
      assertThat(first.take(1)).isTrue();
      nanos.addAndGet(30_000_000); // 30 ms of work
    }
    try (PunctuationBudget.Lease second = budget.lease(10)) {
      assertThat(second.take(1)).isTrue();
      nanos.addAndGet(20_000_000); // 50 ms spent in this window: no more
      assertThat(second.take(1)).isFalse();
      assertThat(second.exhausted()).isTrue();
    }
    try (PunctuationBudget.Lease sameWindow = budget.lease(20)) {
      // Out of time, but a punctuation's first unit of work is never refused for time: each one makes progress.
      assertThat(sameWindow.take(1)).isTrue();
      assertThat(sameWindow.take(1)).isFalse();
    }
    try (PunctuationBudget.Lease nextWindow = budget.lease(100)) {
      assertThat(nextWindow.take(1)).isTrue();
    }
  }

  @Test
  void aClosedLeaseTakesNothingAndBadLimitsAreRefused() {
    PunctuationBudget budget = new PunctuationBudget(10, 10, 100, nanos::get);
    PunctuationBudget.Lease lease = budget.lease(0);
    lease.close();
    assertThat(lease.take(1)).isFalse();
    assertThat(budget.maxRecords()).isEqualTo(10);
    assertThatThrownBy(() -> new PunctuationBudget(0, 10, 100)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("0/10ms/100ms");
    assertThatThrownBy(() -> new PunctuationBudget(1, 0, 100)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new PunctuationBudget(1, 1, 0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aClockGoingBackOpensANewWindow() {
    PunctuationBudget budget = new PunctuationBudget(5, 1_000, 100, nanos::get);
    try (PunctuationBudget.Lease l = budget.lease(1_000)) {
      takeAll(l, 5);
    }
    try (PunctuationBudget.Lease l = budget.lease(900)) {
      assertThat(takeAll(l, 5)).isEqualTo(5);
    }
  }

  private static long takeAll(PunctuationBudget.Lease lease, int wanted) {
    long n = 0;
    while (n < wanted && lease.take(1)) {
      n++;
    }
    return n;
  }
}
