package dev.impipe.bench.scenario;

import dev.impipe.bench.report.ThreadCpu;
import dev.impipe.edge.app.PipelineRuntime;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.Callback;

/** Small pieces the scenarios share. */
final class Support {

  private Support() {}

  /** Remembers the first send failure; {@link #check()} rethrows it. */
  static final class SendErrors implements Callback {
    private final AtomicReference<Exception> first = new AtomicReference<>();

    @Override
    public void onCompletion(org.apache.kafka.clients.producer.RecordMetadata metadata, Exception e) {
      if (e != null) {
        first.compareAndSet(null, e);
      }
    }

    void check() {
      Exception e = first.get();
      if (e != null) {
        throw new IllegalStateException("a record could not be produced: " + e, e);
      }
    }
  }

  /**
   * Paces a fixed rate: {@link #due()} says how many records to send now so that the count follows
   * {@code rate * elapsed}, then {@link #pause()} parks for a millisecond.
   */
  static final class Pacer {
    private final double perSecond;
    private final long start = System.nanoTime();
    private long sent;

    Pacer(double perSecond) {
      this.perSecond = perSecond;
    }

    long due() {
      long target = (long) ((System.nanoTime() - start) / 1e9 * perSecond);
      long n = Math.max(0, target - sent);
      sent += n;
      return n;
    }

    double elapsedSeconds() {
      return (System.nanoTime() - start) / 1e9;
    }

    void pause() {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }

  /**
   * Meters found by name, per registry. A search walks every meter of the registry, and a runtime whose Streams apps
   * have many stores and tasks has thousands: a drain polls its counter every 20 ms, which searched away a fifth of a
   * core of the JVM being measured, more with more stores (ADR 0015). A meter once found stays the same object.
   */
  private static final Map<MeterRegistry, Map<String, Meter>> FOUND =
      Collections.synchronizedMap(new WeakHashMap<>());

  /** The value of counter {@code name} in the runtime's meter registry, 0 if not registered (yet). */
  static double counter(PipelineRuntime runtime, String name) {
    Counter c = found(runtime.metrics(), name, Counter.class);
    return c == null ? 0 : c.count();
  }

  /** The value of gauge {@code name}, 0 if not registered (yet). */
  static double gauge(PipelineRuntime runtime, String name) {
    Gauge g = found(runtime.metrics(), name, Gauge.class);
    return g == null ? 0 : g.value();
  }

  /** The meter {@code name} of {@code type}, searched for only until it is registered. */
  static <M extends Meter> M found(MeterRegistry registry, String name, Class<M> type) {
    Map<String, Meter> byName = FOUND.computeIfAbsent(registry, r -> new ConcurrentHashMap<>());
    Meter m = byName.get(name);
    if (m == null) {
      m = registry.find(name).meters().stream().filter(type::isInstance).findFirst().orElse(null);
      if (m == null) {
        return null;
      }
      byName.put(name, m);
    }
    return type.isInstance(m) ? type.cast(m) : null;
  }

  /**
   * CPU time used so far by this JVM and by the broker's (when the cluster started it), in seconds: the cost of a
   * phase is the difference, steadier between runs on a shared VM than a rate is.
   */
  record Cpu(double self, double broker) {
    static Cpu now(java.util.OptionalLong brokerPid) {
      return new Cpu(ThreadCpu.processSeconds(ProcessHandle.current()), brokerPid.isPresent()
          ? ProcessHandle.of(brokerPid.getAsLong()).map(ThreadCpu::processSeconds).orElse(0.0) : 0.0);
    }

    Cpu since(Cpu start) {
      return new Cpu(self - start.self, broker - start.broker);
    }
  }

  /** The sum of the Kafka client / Streams metric {@code name} over all of the app's clients and threads. */
  static double streamsMetricSum(org.apache.kafka.streams.KafkaStreams app, String name) {
    double sum = 0;
    for (var e : app.metrics().entrySet()) {
      if (e.getKey().name().equals(name) && e.getValue().metricValue() instanceof Number n) {
        sum += n.doubleValue();
      }
    }
    return sum;
  }

  /** Milliseconds this JVM's collectors have spent collecting (pauses and concurrent work as they report it). */
  static long gcMillis() {
    long sum = 0;
    for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
      sum += Math.max(0, gc.getCollectionTime());
    }
    return sum;
  }

  /**
   * CPU milliseconds every process of the machine has used so far (all cores; {@code /proc/stat}: user, nice,
   * system, irq, softirq and steal time), 0 where there is no {@code /proc/stat}. Per second, it says how much of the
   * machine was left idle.
   */
  static long machineBusyMillis() {
    return procStatCpuMillis(1, 2, 3, 6, 7, 8);
  }

  /** Milliseconds the machine's CPUs have been idle waiting for I/O so far ({@code /proc/stat}), 0 without it. */
  static long machineIoWaitMillis() {
    return procStatCpuMillis(5);
  }

  /**
   * The sum of the given fields of {@code /proc/stat}'s first line ({@code cpu user nice system idle iowait irq softirq
   * steal ...}, in USER_HZ: 100 per second on Linux), in milliseconds; 0 where there is no {@code /proc/stat}.
   */
  private static long procStatCpuMillis(int... fields) {
    try {
      String[] f = java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long ticks = 0;
      for (int i : fields) {
        ticks += i < f.length ? Long.parseLong(f[i]) : 0;
      }
      return ticks * 10;
    } catch (java.io.IOException | RuntimeException e) {
      return 0;
    }
  }

  /** Kilobytes the kernel has written from the page cache to disk so far ({@code /proc/vmstat nr_written}). */
  static long pagesWrittenKb() {
    try (var lines = java.nio.file.Files.lines(java.nio.file.Path.of("/proc/vmstat"))) {
      return lines.filter(l -> l.startsWith("nr_written ")).mapToLong(l -> Long.parseLong(l.substring(11).trim()) * 4)
          .findFirst().orElse(0);
    } catch (java.io.IOException | RuntimeException e) {
      return 0;
    }
  }

  static String mb(long bytes) {
    return String.format(java.util.Locale.ROOT, "%.1f MB", bytes / 1048576.0);
  }

  static double mbValue(long bytes) {
    return bytes / 1048576.0;
  }

  /**
   * Sends for {@code seconds} as fast as {@code send} goes while at most {@code maxPending} of the pushes it caused
   * (two per message) are not delivered yet; counts the messages sent in {@code sent}.
   */
  static void sendBounded(long seconds, long maxPending, AtomicLong sent, AtomicLong pushes,
      BooleanSupplier send) {
    long s0 = sent.get();
    long p0 = pushes.get();
    long t0 = System.nanoTime();
    while (System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(seconds)) {
      if ((sent.get() - s0) * 2 - (pushes.get() - p0) > maxPending) {
        // Wait without spinning: on two cores a spinning sender takes the CPU the pipeline needs.
        LockSupport.parkNanos(200_000);
        continue;
      }
      if (send.getAsBoolean()) {
        sent.incrementAndGet();
      }
    }
  }
}
