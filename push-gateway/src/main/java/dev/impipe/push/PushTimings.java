package dev.impipe.push;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Where a live push's time goes inside the gateway, as timers with a percentile histogram (Prometheus buckets, so a
 * reader of {@code /metrics} can take the percentiles of any interval from two scrapes): the inbox record's timestamp
 * (the message's send time) until the reader's poll returned it, from there until the reader handed it to its
 * connections, and each frame from being handed to the socket until the write completed.
 */
final class PushTimings {

  private final Timer readerLag;
  private final Timer handoff;
  private final Timer socketWrite;

  PushTimings(MeterRegistry metrics) {
    this.readerLag = timer(metrics, "im.push.reader.lag",
        "inbox record's timestamp until the gateway's reader polled it (read_committed: after its transaction)");
    this.handoff = timer(metrics, "im.push.reader.handoff",
        "inbox record polled by the gateway's reader until handed to its connections (frames queued on sockets)");
    this.socketWrite = timer(metrics, "im.push.socket.write",
        "frame queued on a device socket until its write completed (taken by the network)");
  }

  private static Timer timer(MeterRegistry metrics, String name, String description) {
    return Timer.builder(name).description(description).publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(30)).register(metrics);
  }

  /** An inbox record with timestamp {@code timestampMs} was polled at {@code polledMs} (wall clock). */
  void polled(long timestampMs, long polledMs) {
    readerLag.record(Math.max(0, polledMs - timestampMs), TimeUnit.MILLISECONDS);
  }

  /** An inbox record polled at {@code polledNanos} was handed to its connections now. */
  void handedOff(long polledNanos) {
    handoff.record(System.nanoTime() - polledNanos, TimeUnit.NANOSECONDS);
  }

  /** A frame queued at {@code queuedNanos} was written now. */
  void written(long queuedNanos) {
    socketWrite.record(System.nanoTime() - queuedNanos, TimeUnit.NANOSECONDS);
  }
}
