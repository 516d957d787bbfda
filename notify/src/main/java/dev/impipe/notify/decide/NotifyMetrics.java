package dev.impipe.notify.decide;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The deciding topology's meters: notifications decided (counter) and pending bursts (device x conversation entries
 * waiting to be decided or for their coalescing window to end; gauge, kept per task and summed over this process's
 * tasks).
 */
public final class NotifyMetrics {

  public static final String DECIDED = "im.notify.decided";
  public static final String PENDING = "im.notify.pending";

  private final Map<String, AtomicLong> pendingByTask = new ConcurrentHashMap<>();
  private final Counter decided;

  public NotifyMetrics(MeterRegistry registry) {
    Gauge.builder(PENDING, pendingByTask, m -> m.values().stream().mapToLong(AtomicLong::get).sum())
        .description("Device x conversation bursts pending (approximate right after a restart)")
        .register(registry);
    decided = Counter.builder(DECIDED).description("Notifications written to im.notifications").register(registry);
  }

  /** Meters that go nowhere (tests, tools). */
  public static NotifyMetrics discarding() {
    return new NotifyMetrics(new SimpleMeterRegistry());
  }

  /** The pending count of one task, registered until {@link #release(String)}. */
  AtomicLong pendingOf(String taskId) {
    return pendingByTask.computeIfAbsent(taskId, t -> new AtomicLong());
  }

  void release(String taskId) {
    pendingByTask.remove(taskId);
  }

  void decided() {
    decided.increment();
  }

  /** Pending bursts over this process's tasks. */
  public long pending() {
    return pendingByTask.values().stream().mapToLong(AtomicLong::get).sum();
  }

  /** Notifications decided by this process. */
  public double decidedCount() {
    return decided.count();
  }
}
