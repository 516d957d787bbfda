package dev.impipe.notify.send;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class RetryQueueTest {

  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @Test
  void itemsComeOutWhenDueEarliestFirstAndAtMostMax() {
    // Given three items due at +3 s, +1 s and +1 s (added in that order)
    RetryQueue<String> q = new RetryQueue<>();
    q.add("c", T0.plusSeconds(3));
    q.add("a", T0.plusSeconds(1));
    q.add("b", T0.plusSeconds(1));
    assertThat(q.nextDue()).contains(T0.plusSeconds(1));

    // At +0.5 s: nothing is due
    assertThat(q.takeDue(T0.plusMillis(500), 10)).isEmpty();
    // At +1 s, one at most: the first added of the two due
    assertThat(q.takeDue(T0.plusSeconds(1), 1)).containsExactly("a");
    assertThat(q.takeDue(T0.plusSeconds(2), 10)).containsExactly("b");
    assertThat(q.size()).isEqualTo(1);
    assertThat(q.takeDue(T0.plusSeconds(3), 0)).isEmpty();
    assertThat(q.takeDue(T0.plusSeconds(3), 10)).containsExactly("c");
    assertThat(q.nextDue()).isEmpty();
  }
}
