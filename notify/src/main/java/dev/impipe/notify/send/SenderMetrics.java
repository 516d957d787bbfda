package dev.impipe.notify.send;

import dev.impipe.notify.provider.SendOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The sender's meters (Prometheus: {@code im_notify_sent_total{provider,outcome}}, {@code im_notify_latency_seconds}
 * from the inbox entry to the provider's answer, {@code im_notify_retries_total}, {@code im_notify_in_flight}).
 */
final class SenderMetrics {

  private final MeterRegistry registry;
  private final Counter retries;
  private final AtomicInteger inFlight = new AtomicInteger();

  SenderMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.retries = Counter.builder("im.notify.retries").description("notifications scheduled for another send")
        .register(registry);
    Gauge.builder("im.notify.in.flight", inFlight, AtomicInteger::get)
        .description("sends waiting for a provider's answer").register(registry);
  }

  void answered(String provider, SendOutcome outcome, Duration sinceEntry) {
    String name = outcome instanceof SendOutcome.Delivered ? "delivered"
        : outcome instanceof SendOutcome.Gone ? "gone" : outcome instanceof SendOutcome.Retry ? "retry" : "failed";
    String tag = provider.toLowerCase(Locale.ROOT);
    Counter.builder("im.notify.sent").description("provider answers").tag("provider", tag).tag("outcome", name)
        .register(registry).increment();
    if (!sinceEntry.isNegative()) {
      Timer.builder("im.notify.latency").description("from the inbox entry to the provider's answer")
          .tag("provider", tag).publishPercentileHistogram().register(registry).record(sinceEntry);
    }
  }

  void retried() {
    retries.increment();
  }

  void inFlight(int n) {
    inFlight.set(n);
  }
}
