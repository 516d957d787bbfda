package dev.impipe.delay;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The delay topology's meters (Prometheus names in brackets):
 * <ul>
 *   <li>{@code im.delay.scheduled} [im_delay_scheduled]: records scheduled and not yet delivered or cancelled
 *       (gauge; starts from RocksDB's estimate after a restart, exact changes after that);
 *   <li>{@code im.delay.due.backlog} [im_delay_due_backlog]: records already due but not yet delivered (gauge;
 *       counted up to {@link #BACKLOG_COUNT_LIMIT} per task);
 *   <li>{@code im.delay.lateness} [im_delay_lateness_seconds]: delivered time minus requested time (histogram);
 *   <li>{@code im.delay.delivered} [im_delay_delivered_total], {@code im.delay.schedules}
 *       [im_delay_schedules_total] (accepted SCHEDULE commands);
 *   <li>{@code im.delay.cancels} [im_delay_cancels_total] with {@code result=removed|noop};
 *   <li>{@code im.delay.rejected} [im_delay_rejected_total] with {@code reason=max-delay|target|invalid|not-sender};
 *   <li>{@code im.delay.punctuation.records} [im_delay_punctuation_records]: records delivered per punctuation
 *       (its max is the configured batch while a backlog drains);
 *   <li>{@code im.delay.drain.rate} [im_delay_drain_rate]: records delivered per second over the last second.
 * </ul>
 * One instance per app; every task of the app reports into it.
 */
public final class DelayMetrics {

  /** The due backlog is counted up to this many records per task (counting further costs a long scan). */
  public static final int BACKLOG_COUNT_LIMIT = 100_000;

  private final Map<Object, TaskGauges> tasks = new ConcurrentHashMap<>();
  private final Counter schedules;
  private final Counter delivered;
  private final Counter cancelsRemoved;
  private final Counter cancelsNoop;
  private final Map<String, Counter> rejected = new ConcurrentHashMap<>();
  private final Timer lateness;
  private final DistributionSummary punctuationRecords;
  private final MeterRegistry registry;
  private long windowStart = -1;
  private long windowCount;
  private volatile double drainRate;

  public DelayMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("im.delay.scheduled", tasks, t -> t.values().stream().mapToLong(g -> g.pending).sum())
        .description("Records scheduled and not yet delivered or cancelled").register(registry);
    Gauge.builder("im.delay.due.backlog", tasks, t -> t.values().stream().mapToLong(g -> g.backlog).sum())
        .description("Records due but not yet delivered").register(registry);
    // No base unit: Prometheus would append it to the name (im_delay_drain_rate_records_s, an abbreviated unit
    // promtool flags); the unit is in the description. rate(im_delay_delivered_total[1m]) is the same figure.
    Gauge.builder("im.delay.drain.rate", this, m -> m.drainRate)
        .description("Records delivered per second (records/s) over the last second").register(registry);
    schedules = Counter.builder("im.delay.schedules").description("SCHEDULE commands accepted").register(registry);
    delivered = Counter.builder("im.delay.delivered").description("Scheduled records delivered").register(registry);
    cancelsRemoved = Counter.builder("im.delay.cancels").tag("result", "removed")
        .description("CANCEL commands").register(registry);
    cancelsNoop = Counter.builder("im.delay.cancels").tag("result", "noop")
        .description("CANCEL commands").register(registry);
    lateness = Timer.builder("im.delay.lateness").description("Delivered time minus requested delivery time")
        .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofHours(1)).register(registry);
    punctuationRecords = DistributionSummary.builder("im.delay.punctuation.records")
        .description("Records delivered per punctuation").register(registry);
  }

  /** Per-task gauges; the task removes itself on close. */
  public static final class TaskGauges {
    volatile long pending;
    volatile long backlog;

    public void pending(long value) {
      pending = Math.max(0, value);
    }

    public long pending() {
      return pending;
    }

    public void backlog(long value) {
      backlog = Math.max(0, value);
    }

    public long backlog() {
      return backlog;
    }
  }

  public TaskGauges task(Object taskId) {
    TaskGauges gauges = new TaskGauges();
    tasks.put(taskId, gauges);
    return gauges;
  }

  public void closeTask(Object taskId) {
    tasks.remove(taskId);
  }

  public void scheduled() {
    schedules.increment();
  }

  public void cancelled(boolean removed) {
    (removed ? cancelsRemoved : cancelsNoop).increment();
  }

  public void rejected(String reason) {
    rejected.computeIfAbsent(reason, r -> Counter.builder("im.delay.rejected").tag("reason", r)
        .description("Schedules rejected to the rejected topic").register(registry)).increment();
  }

  public void delivered(long latenessMs) {
    delivered.increment();
    lateness.record(Math.max(0, latenessMs), TimeUnit.MILLISECONDS);
  }

  /** One punctuation delivered {@code records} at wall-clock time {@code nowMs}. */
  public synchronized void punctuated(int records, long nowMs) {
    punctuationRecords.record(records);
    if (windowStart < 0) {
      windowStart = nowMs;
    }
    windowCount += records;
    long elapsed = nowMs - windowStart;
    if (elapsed >= 1_000) {
      drainRate = windowCount * 1_000.0 / elapsed;
      windowStart = nowMs;
      windowCount = 0;
    }
  }
}
