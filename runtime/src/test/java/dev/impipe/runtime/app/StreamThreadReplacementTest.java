package dev.impipe.runtime.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StreamThreadReplacementTest {

  private final AtomicLong now = new AtomicLong(1_000_000);
  private final StreamThreadReplacement policy = new StreamThreadReplacement("fanout", 3, Duration.ofMinutes(10),
      now::get);
  private final RuntimeException bug = new NullPointerException("a bug");

  @Test
  void aThreadIsReplacedThreeTimesWithinTenMinutesThenTheClientShutsDown() {
    // Given three deaths a minute apart: each thread is replaced
    assertThat(policy.handle(bug)).isEqualTo(REPLACE_THREAD);
    now.addAndGet(60_000);
    assertThat(policy.handle(bug)).isEqualTo(REPLACE_THREAD);
    now.addAndGet(60_000);
    assertThat(policy.handle(bug)).isEqualTo(REPLACE_THREAD);
    // When a fourth dies at now = 2 min (within 10 minutes of the first)
    // Then the client shuts down, and stays shut for any later death in the window
    assertThat(policy.handle(bug)).isEqualTo(SHUTDOWN_CLIENT);
    now.addAndGet(60_000);
    assertThat(policy.handle(bug)).isEqualTo(SHUTDOWN_CLIENT);
  }

  @Test
  void replacementsOlderThanTheWindowNoLongerCount() {
    // Given three replacements at now = 0, 1 and 2 minutes
    for (int i = 0; i < 3; i++) {
      assertThat(policy.handle(bug)).isEqualTo(REPLACE_THREAD);
      now.addAndGet(60_000);
    }
    // When the next death comes 10 minutes after the first (now = 10 min): the first has left the window
    now.addAndGet(7 * 60_000);
    // Then it is replaced; one more at once is the fourth within 10 minutes
    assertThat(policy.handle(bug)).isEqualTo(REPLACE_THREAD);
    assertThat(policy.handle(bug)).isEqualTo(SHUTDOWN_CLIENT);
  }

  @Test
  void zeroReplacementsShutsDownAtTheFirstDeath() {
    StreamThreadReplacement never = new StreamThreadReplacement("fanout", 0, Duration.ofMinutes(10), now::get);
    assertThat(never.handle(bug)).isEqualTo(SHUTDOWN_CLIENT);
  }

  @Test
  void theBoundIsReadFromTheEnvironment() {
    // Given IM_STREAM_THREAD_REPLACEMENTS=1 within 1 minute
    StreamThreadReplacement fromEnv = StreamThreadReplacement.fromEnv("fanout", Map.of(
        StreamThreadReplacement.IM_STREAM_THREAD_REPLACEMENTS, "1",
        StreamThreadReplacement.IM_STREAM_THREAD_REPLACEMENT_WINDOW, "1m"));
    // Then one replacement, then shut down
    assertThat(fromEnv.handle(bug)).isEqualTo(REPLACE_THREAD);
    assertThat(fromEnv.handle(bug)).isEqualTo(SHUTDOWN_CLIENT);
    // And a bad value names the variable
    assertThatThrownBy(() -> StreamThreadReplacement.fromEnv("fanout", Map.of(
        StreamThreadReplacement.IM_STREAM_THREAD_REPLACEMENTS, "-1")))
        .hasMessageContaining(StreamThreadReplacement.IM_STREAM_THREAD_REPLACEMENTS);
  }
}
