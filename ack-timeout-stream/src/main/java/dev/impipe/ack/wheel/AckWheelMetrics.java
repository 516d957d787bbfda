package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.InputLag;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The wheel's meters: pending seqs (gauge, summed over the tasks of this process; exact deltas from the count of
 * device records at the tasks' start), timeouts emitted (counter,
 * tagged {@code kind=final|retry}), seqs timed out, delivered seqs ignored after their ACK, the lateness of each
 * timeout (emit time minus deadline) as a histogram, and the slot-boundary rounds that learnt no end offset of an input
 * (the broker did not answer within {@code StreamThreadConsumers.END_OFFSET_TIMEOUT}, or the partition is not assigned
 * yet), tagged {@code input=deliveries|acks}, and how long an input went without a record processed while its next
 * one was already written (waits of a second or more, a histogram with fixed buckets: a wait near the input grace
 * makes the wheel take a busy input for a stuck one).
 */
public final class AckWheelMetrics {

  public static final String PENDING = "im.ack.pending.entries";
  public static final String TIMEOUTS = "im.ack.timeouts.emitted";
  public static final String TIMED_OUT_SEQS = "im.ack.timed.out.seqs";
  public static final String IGNORED_DELIVERIES = "im.ack.deliveries.ignored";
  public static final String LATENESS = "im.ack.timeout.lateness";
  public static final String ENDS_UNKNOWN = "im.ack.input.ends.unknown";
  public static final String INPUT_WAIT = "im.ack.input.wait";

  private final Map<String, AtomicLong> pendingByTask = new ConcurrentHashMap<>();
  private final Counter finalTimeouts;
  private final Counter retryTimeouts;
  private final Counter timedOutSeqs;
  private final Counter ignoredDeliveries;
  private final Timer lateness;
  private final Counter deliveryEndsUnknown;
  private final Counter ackEndsUnknown;
  private final Timer inputWait;

  public AckWheelMetrics(MeterRegistry registry) {
    Gauge.builder(PENDING, pendingByTask, m -> m.values().stream().mapToLong(AtomicLong::get).sum())
        .description("Pushed seqs waiting for their ACK (after a restart: counted from the number of device records)")
        .register(registry);
    finalTimeouts = Counter.builder(TIMEOUTS).tag("kind", "final")
        .description("AckTimeout records emitted").register(registry);
    retryTimeouts = Counter.builder(TIMEOUTS).tag("kind", "retry")
        .description("AckTimeout records emitted").register(registry);
    timedOutSeqs = Counter.builder(TIMED_OUT_SEQS)
        .description("Seqs carried by emitted AckTimeout records").register(registry);
    ignoredDeliveries = Counter.builder(IGNORED_DELIVERIES)
        .description("Delivered seqs ignored because the device had already ACKed them").register(registry);
    lateness = Timer.builder(LATENESS)
        .description("Emit time minus deadline of each AckTimeout")
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofMinutes(10))
        .register(registry);
    deliveryEndsUnknown = endsUnknown(registry, "deliveries");
    ackEndsUnknown = endsUnknown(registry, "acks");
    inputWait = Timer.builder(INPUT_WAIT)
        .description("Time an input went without a record processed while its next record was already written")
        .serviceLevelObjectives(Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(15),
            Duration.ofSeconds(30), Duration.ofSeconds(60))
        .register(registry);
  }

  private static Counter endsUnknown(MeterRegistry registry, String input) {
    return Counter.builder(ENDS_UNKNOWN).tag("input", input)
        .description("Slot-boundary rounds that learnt no end offset of the input").register(registry);
  }

  /** Meters that go nowhere (tests, tools). */
  public static AckWheelMetrics discarding() {
    return new AckWheelMetrics(new SimpleMeterRegistry());
  }

  /** The pending-entry count of one task, registered until {@link #release(String)}. */
  AtomicLong pendingOf(String taskId) {
    return pendingByTask.computeIfAbsent(taskId, t -> new AtomicLong());
  }

  void release(String taskId) {
    pendingByTask.remove(taskId);
  }

  void timeoutEmitted(boolean isFinal, int seqs, long latenessMs) {
    (isFinal ? finalTimeouts : retryTimeouts).increment();
    timedOutSeqs.increment(seqs);
    lateness.record(Math.max(0, latenessMs), TimeUnit.MILLISECONDS);
  }

  /** {@code lag}, counting each end offset it does not learn, per input ({@code deliveriesTopic}, or the ACKs). */
  InputLag countingUnknownEnds(InputLag lag, String deliveriesTopic) {
    return (topic, partition, asOf) -> {
      Optional<InputLag.Ends> ends = lag.ends(topic, partition, asOf);
      if (ends.isEmpty()) {
        (topic.equals(deliveriesTopic) ? deliveryEndsUnknown : ackEndsUnknown).increment();
      }
      return ends;
    };
  }

  /** An input's records waited {@code ms} (a second or more) before one was processed. */
  void inputWaited(long ms) {
    inputWait.record(ms, TimeUnit.MILLISECONDS);
  }

  void deliveryIgnored(long seqs) {
    ignoredDeliveries.increment(seqs);
  }

  /** Current sum of pending entries over this process's tasks. */
  public long pending() {
    return pendingByTask.values().stream().mapToLong(AtomicLong::get).sum();
  }
}
