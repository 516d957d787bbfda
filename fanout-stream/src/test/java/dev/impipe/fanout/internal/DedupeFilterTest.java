package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DedupeFilterTest {

  private static final long WINDOW = 1_000;
  private static final long PLENTY = 64L << 20;

  @Test
  void aKeyIsFoundAnywhereWithinTheWindowOfItsTimeAndNowhereElse() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);
    filter.add(key("k"), 10_000);

    for (long t = 10_000 - WINDOW; t <= 10_000 + WINDOW; t += 7) {
      assertThat(filter.mightContain(key("k"), t)).as("at %d", t).isTrue();
    }
    // Beyond the window (plus the bucket the key rounds to) no lookup reaches its bucket
    assertThat(filter.mightContain(key("k"), 10_000 + 3 * WINDOW)).isFalse();
    assertThat(filter.mightContain(key("k"), 10_000 - 3 * WINDOW)).isFalse();
  }

  @Test
  void neverAFalseNegativeAndFewFalsePositivesOverManyKeysAndBuckets() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);
    Random random = new Random(7);
    int n = 200_000;
    long[] times = new long[n];
    for (int i = 0; i < n; i++) {
      times[i] = random.nextInt(20_000);
      filter.add(key("m-" + i), times[i]);
    }
    for (int i = 0; i < n; i++) {
      long at = times[i] + random.nextInt((int) (2 * WINDOW + 1)) - WINDOW;
      assertThat(filter.mightContain(key("m-" + i), at)).as("key %d", i).isTrue();
    }
    int positives = 0;
    for (int i = 0; i < n; i++) {
      if (filter.mightContain(key("other-" + i), random.nextInt(20_000))) {
        positives++;
      }
    }
    // Five buckets asked, each below twice the first filter's 0.5%
    assertThat(positives).as("false positives of %d", n).isLessThan(n * 5 / 100);
  }

  @Test
  void aFullBucketAnswersMaybeForEveryKey() {
    // Room for the first filter of one bucket only: its second filter is refused
    DedupeFilter filter = new DedupeFilter(WINDOW, 300_000);
    for (int i = 0; i < DedupeFilter.FIRST_CAPACITY + 1; i++) {
      filter.add(key("m-" + i), 5_000);
    }

    assertThat(filter.mightContain(key("never-added"), 5_000)).isTrue();
    // A bucket that got no filter at all is full too
    filter.add(key("late"), 50_000);
    assertThat(filter.mightContain(key("late"), 50_000)).isTrue();
    assertThat(filter.mightContain(key("also-never-added"), 50_000)).isTrue();
  }

  @Test
  void droppedBucketsAnswerMaybeAndFreeTheirMemory() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);
    filter.add(key("old"), 1_000);
    filter.add(key("new"), 20_000);
    long before = filter.bits();

    filter.expireBefore(20_000 - WINDOW);

    assertThat(filter.bits()).isLessThan(before);
    assertThat(filter.buckets()).isEqualTo(1);
    // A record that old reads the store: the filter no longer knows
    assertThat(filter.mightContain(key("anything"), 1_000)).isTrue();
    assertThat(filter.mightContain(key("new"), 20_000)).isTrue();
    assertThat(filter.mightContain(key("not-added"), 20_000)).isFalse();
  }

  private static byte[] key(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
