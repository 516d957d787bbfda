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

  @Test
  void theWatermarkKeepsTheBucketItFallsInAndALookupAtItStillGetsAnAnswer() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);
    // Buckets of 500 ms: the watermark 19_000 - WINDOW falls in the bucket 18_000..18_499
    filter.add(key("edge"), 18_000);

    filter.expireBefore(19_000);

    assertThat(filter.buckets()).isEqualTo(1);
    // 19_000 is the oldest time still asked about: its window starts in the kept bucket
    assertThat(filter.mightContain(key("edge"), 19_000)).isTrue();
    assertThat(filter.mightContain(key("not-added"), 19_000)).isFalse();
    // A key added in the kept bucket after the expiry is remembered too
    filter.add(key("late-edge"), 18_499);
    assertThat(filter.mightContain(key("late-edge"), 19_000)).isTrue();
  }

  @Test
  void aWatermarkThatGoesBackBringsNoDroppedBucketBack() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);
    filter.add(key("old"), 1_000);
    filter.expireBefore(20_000);
    filter.expireBefore(5_000);

    filter.add(key("older-than-the-watermark"), 1_000);

    assertThat(filter.buckets()).isZero();
    assertThat(filter.bits()).isZero();
    assertThat(filter.mightContain(key("anything"), 1_000)).isTrue();
  }

  @Test
  void bucketsSpanHalfTheWindow() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);

    filter.add(key("a"), 0);
    filter.add(key("b"), 499);
    filter.add(key("c"), 500);
    filter.add(key("d"), 1_000);

    assertThat(filter.buckets()).isEqualTo(3);
  }

  @Test
  void keysOfTheSameLengthAreToldApart() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);
    filter.add(key("m-1"), 5_000);

    assertThat(filter.mightContain(key("m-1"), 5_000)).isTrue();
    assertThat(filter.mightContain(key("m-2"), 5_000)).isFalse();
    assertThat(filter.mightContain(key("n-1"), 5_000)).isFalse();
  }

  @Test
  void theHashIsFnv1aFinishedBySplitMix64() {
    // FNV-1a 64 of "" is its offset basis 0xcbf29ce484222325, of "a" 0xaf63dc4c8601ec8c, of "foobar"
    // 0x85944171f73967e8 (the published test vectors); SplitMix64's finalizer mixes each
    assertThat(DedupeFilter.hash(new byte[0])).isEqualTo(0xf52a15e9a9b5e89bL);
    assertThat(DedupeFilter.hash(key("a"))).isEqualTo(0x02c0bdbf481420f8L);
    assertThat(DedupeFilter.hash(key("foobar"))).isEqualTo(0x404da9e3b74078c2L);
    // Bytes are unsigned
    assertThat(DedupeFilter.hash(new byte[] {(byte) 0xff, (byte) 0x80})).isEqualTo(0xce476189e98c0818L);
  }

  @Test
  void aFirstFilterTakesTheBitsForItsCapacityAtItsFalsePositiveRate() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);
    filter.add(key("k"), 5_000);

    // m = -n ln(p) / ln(2)^2 = 180,679 bits for n = 16,384 keys at p = 0.5%, rounded up to whole 64-bit words
    assertThat(filter.bits()).isEqualTo(180_736);
  }

  @Test
  void aBucketsNextFilterHoldsTwiceTheKeysAtHalfTheFalsePositiveRate() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);
    filter.add(key("first"), 5_000);
    long first = filter.bits();

    for (int i = 0; i < DedupeFilter.FIRST_CAPACITY; i++) {
      filter.add(key("m-" + i), 5_000);
    }

    // n = 32,768 keys at p = 0.25%: 408,632 bits, more than twice the first filter's
    assertThat(filter.bits() - first).isEqualTo(408_640);
  }

  @Test
  void aMemoryBoundOfExactlyOneFirstFilterHoldsIt() {
    DedupeFilter filter = new DedupeFilter(WINDOW, 180_736);

    filter.add(key("k"), 5_000);

    assertThat(filter.bits()).isEqualTo(180_736);
    assertThat(filter.mightContain(key("k"), 5_000)).isTrue();
    assertThat(filter.mightContain(key("not-added"), 5_000)).isFalse();
  }

  @Test
  void aFullFirstFilterKeepsItsFalsePositiveRateNearHalfAPercent() {
    DedupeFilter filter = new DedupeFilter(WINDOW, PLENTY);
    for (int i = 0; i < DedupeFilter.FIRST_CAPACITY; i++) {
      filter.add(key("m-" + i), 5_000);
    }
    int n = 100_000;

    int positives = 0;
    for (int i = 0; i < n; i++) {
      if (filter.mightContain(key("other-" + i), 5_000)) {
        positives++;
      }
    }

    // Eight probes into 11 bits per key: about 0.5%; one probe fewer, or twice as many, is about 1%
    assertThat(positives).as("false positives of %d", n).isLessThan(n * 7 / 1_000);
  }

  private static byte[] key(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
