package dev.impipe.push;

import static dev.impipe.push.FrameLimiter.Verdict.ACCEPT;
import static dev.impipe.push.FrameLimiter.Verdict.TOO_FAST;
import static dev.impipe.push.FrameLimiter.Verdict.TOO_LARGE;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** What a device may send on its socket: frame size, frame rate, sends waiting for their answer. */
class FrameLimiterTest {

  private static final long MS = 1_000_000L;

  private final AtomicLong now = new AtomicLong(0);

  @Test
  void aFrameLargerThanTheLimitIsRefusedAndOneAtTheLimitAccepted() {
    FrameLimiter limiter = new FrameLimiter(new FrameLimiter.Limits(1_024, 10, 4), now::get);
    assertThat(limiter.frame(1_024)).isEqualTo(ACCEPT);
    assertThat(limiter.frame(1_025)).isEqualTo(TOO_LARGE);
  }

  @Test
  void aBurstOfTwoSecondsWorthIsAcceptedThenTheRateHolds() {
    // Given 10 frames a second allowed: at time 0 the bucket holds 20
    FrameLimiter limiter = new FrameLimiter(new FrameLimiter.Limits(1_024, 10, 4), now::get);

    // When 20 frames arrive at once, then a 21st
    for (int i = 0; i < 20; i++) {
      assertThat(limiter.frame(10)).as("frame %d", i).isEqualTo(ACCEPT);
    }
    // Then the 21st is too fast
    assertThat(limiter.frame(10)).isEqualTo(TOO_FAST);

    // When 100 ms pass (it is now 100 ms): one frame's worth came back, not two
    now.set(100 * MS);
    assertThat(limiter.frame(10)).isEqualTo(ACCEPT);
    assertThat(limiter.frame(10)).isEqualTo(TOO_FAST);

    // When a long silence passes (it is now 60 s): the bucket is full again, never fuller
    now.set(60_000 * MS);
    for (int i = 0; i < 20; i++) {
      assertThat(limiter.frame(10)).isEqualTo(ACCEPT);
    }
    assertThat(limiter.frame(10)).isEqualTo(TOO_FAST);
  }

  @Test
  void aDeviceSendingAtTheRateIsNeverCutOff() {
    FrameLimiter limiter = new FrameLimiter(new FrameLimiter.Limits(1_024, 10, 4), now::get);
    for (int i = 0; i < 1_000; i++) {
      now.addAndGet(100 * MS); // one frame every 100 ms: exactly 10 a second
      assertThat(limiter.frame(10)).as("frame %d", i).isEqualTo(ACCEPT);
    }
  }

  @Test
  void sendsBeyondTheBoundWaitForAnAnswer() {
    FrameLimiter limiter = new FrameLimiter(new FrameLimiter.Limits(1_024, 10, 2), now::get);
    // Given two sends unanswered
    assertThat(limiter.startSend()).isTrue();
    assertThat(limiter.startSend()).isTrue();
    // Then a third is refused
    assertThat(limiter.startSend()).isFalse();
    // When one is answered, one more may go
    limiter.endSend();
    assertThat(limiter.startSend()).isTrue();
    assertThat(limiter.startSend()).isFalse();
  }

  @Test
  void moreAnswersThanSendsDoNotOpenExtraSlots() {
    FrameLimiter limiter = new FrameLimiter(new FrameLimiter.Limits(1_024, 10, 1), now::get);
    limiter.endSend();
    limiter.endSend();
    assertThat(limiter.startSend()).isTrue();
    assertThat(limiter.startSend()).isFalse();
  }
}
