package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RetryAfterTest {

  static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  @Test
  void secondsAndHttpDates() {
    assertThat(RetryAfter.parse("120", NOW)).contains(Duration.ofSeconds(120));
    assertThat(RetryAfter.parse(" 0 ", NOW)).contains(Duration.ZERO);
    assertThat(RetryAfter.parse("Thu, 01 Jan 2026 00:00:30 GMT", NOW)).contains(Duration.ofSeconds(30));
    assertThat(RetryAfter.parse("Wed, 31 Dec 2025 23:00:00 GMT", NOW)).contains(Duration.ZERO);
  }

  @Test
  void absentOrUnreadableIsEmpty() {
    assertThat(RetryAfter.parse(null, NOW)).isEmpty();
    assertThat(RetryAfter.parse("", NOW)).isEmpty();
    assertThat(RetryAfter.parse("-5", NOW)).isEmpty();
    assertThat(RetryAfter.parse("soon", NOW)).isEmpty();
  }
}
