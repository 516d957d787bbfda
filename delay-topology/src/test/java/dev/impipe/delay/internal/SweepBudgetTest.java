package dev.impipe.delay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-thread bound of the delay punctuations: records and time per round, a new round only after a gap. */
class SweepBudgetTest {

  private final AtomicLong nanos = new AtomicLong();
  private final SweepBudget budget = new SweepBudget(100, 50, 20, nanos::get);

  @Test
  void tasksOfOneLoopShareTheRecordsOfARound() {
    // Given: task 1 delivers 60 at 1000 ms
    assertThat(budget.allowance(1_000)).isEqualTo(100);
    long started = budget.start();
    assertThat(budget.spent(started, 60, 1_000)).isFalse();

    // When: task 2 of the same loop punctuates right after
    // Then: it may deliver the remaining 40; once spent, the round is over
    assertThat(budget.allowance(1_001)).isEqualTo(40);
    assertThat(budget.spent(budget.start(), 40, 1_001)).isTrue();
    assertThat(budget.allowance(1_002)).isZero();
    // ... until no sweep has worked for the gap: the commit has run, a new round begins
    assertThat(budget.allowance(1_020)).isZero();
    assertThat(budget.allowance(1_021)).isEqualTo(100);
  }

  @Test
  void timeSpentDeliveringEndsARoundToo() {
    assertThat(budget.allowance(0)).isEqualTo(100);
    long started = budget.start();
    nanos.addAndGet(30_000_000);
    assertThat(budget.timeLeft(started)).isTrue();
    nanos.addAndGet(20_000_000);
    // Then: 50 ms spent: no time left, the round is used up after 10 records
    assertThat(budget.timeLeft(started)).isFalse();
    assertThat(budget.spent(started, 10, 5)).isTrue();
    assertThat(budget.allowance(6)).isZero();
    assertThat(budget.allowance(25)).isEqualTo(100);
  }

  @Test
  void aRoundCountsOnlyTheTimeSinceEachSweepBegan() {
    // a monotonic clock's origin is arbitrary: here it reads 7 s when the sweep begins
    nanos.set(7_000_000_000L);
    assertThat(budget.allowance(0)).isEqualTo(100);
    long started = budget.start();
    nanos.addAndGet(10_000_000);

    // 10 ms of the 50 spent: the round goes on
    assertThat(budget.spent(started, 1, 0)).isFalse();
    assertThat(budget.allowance(1)).isEqualTo(99);
  }
}
