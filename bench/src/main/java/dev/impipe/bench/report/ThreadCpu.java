package dev.impipe.bench.report;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Where this JVM's CPU went over a phase, by thread: a snapshot of every Java thread's CPU time, and the process's
 * total; the JVM's own threads (GC, JIT compilers, VM operations) from {@code /proc} on Linux, the rest of the
 * process's total as "other". Threads of one kind are summed under
 * one name (ids and numbers replaced by {@code #}), so "the stream thread" and "its producer's I/O thread" each get
 * one line.
 */
public final class ThreadCpu {

  private static final Pattern UUID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  private static final Pattern NUMBER = Pattern.compile("\\d+");
  private static final String JVM_OWN = "other JVM threads";
  /** The kind of the JIT's compiler threads in {@link #since}. */
  public static final String JIT_COMPILERS = "JIT compilers (JVM)";
  /** Native names of the JIT's compiler threads ({@code C2 CompilerThre}, {@code C1 CompilerThre}). */
  public static final Pattern JIT_THREAD_NAMES = Pattern.compile("^C[12] Compiler.*");

  /** The JVM's own threads by their native names (Linux {@code /proc/self/task/N/comm}). */
  private static final Map<String, Pattern> JVM_KINDS = Map.of(
      "GC (JVM)", Pattern.compile("^(GC Thread|G1 |GC ).*"),
      JIT_COMPILERS, JIT_THREAD_NAMES,
      "VM thread (JVM)", Pattern.compile("^VM (Thread|Periodic).*"));

  private final Map<Long, String> names;
  private final Map<Long, Long> nanos;
  private final long processNanos;
  private final Map<String, Long> jvmNanos;

  private ThreadCpu(Map<Long, String> names, Map<Long, Long> nanos, long processNanos, Map<String, Long> jvmNanos) {
    this.names = names;
    this.nanos = nanos;
    this.processNanos = processNanos;
    this.jvmNanos = jvmNanos;
  }

  /** CPU time of every live Java thread and of the process, now. */
  public static ThreadCpu now() {
    Map<Long, String> names = new HashMap<>();
    Map<Long, Long> nanos = new HashMap<>();
    eachJavaThread((id, name, cpu) -> {
      names.put(id, name);
      nanos.put(id, cpu);
    });
    long process = (long) (processSeconds(ProcessHandle.current()) * 1e9);
    return new ThreadCpu(names, nanos, process, jvmThreads());
  }

  /** CPU milliseconds used so far by this JVM's live Java threads whose name {@code select} accepts. */
  public static long cpuMillis(Predicate<String> select) {
    long[] sum = new long[1];
    eachJavaThread((id, name, cpu) -> {
      if (select.test(name)) {
        sum[0] += cpu;
      }
    });
    return sum[0] / 1_000_000;
  }

  /** CPU seconds a process has used so far (0 when the OS does not say). */
  public static double processSeconds(ProcessHandle process) {
    return process.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(0.0);
  }

  private interface ThreadVisitor {
    void visit(long id, String name, long cpuNanos);
  }

  private static void eachJavaThread(ThreadVisitor visitor) {
    ThreadMXBean bean = ManagementFactory.getThreadMXBean();
    for (ThreadInfo info : bean.getThreadInfo(bean.getAllThreadIds())) {
      if (info != null) {
        long cpu = bean.getThreadCpuTime(info.getThreadId());
        if (cpu >= 0) {
          visitor.visit(info.getThreadId(), info.getThreadName(), cpu);
        }
      }
    }
  }

  /** CPU of the JVM's own threads by kind, from {@code /proc} (empty where there is none). */
  private static Map<String, Long> jvmThreads() {
    Map<String, Long> byKind = new HashMap<>();
    eachNativeThread("self", (comm, cpuNanos) -> JVM_KINDS.forEach((kind, pattern) -> {
      if (pattern.matcher(comm).matches()) {
        byKind.merge(kind, cpuNanos, Long::sum);
      }
    }));
    return byKind;
  }

  /**
   * CPU milliseconds used so far by the live threads of process {@code pid} whose native name (Linux {@code
   * /proc/PID/task/N/comm}, at most 15 characters, e.g. {@code C2 CompilerThre} or {@code rocksdb:high}) {@code
   * select} matches; 0 where there is no {@code /proc}. Sees threads the JVM does not list, in other processes too.
   */
  public static long nativeThreadMillis(long pid, Pattern select) {
    long[] sum = new long[1];
    eachNativeThread(Long.toString(pid), (comm, cpuNanos) -> {
      if (select.matcher(comm).matches()) {
        sum[0] += cpuNanos;
      }
    });
    return sum[0] / 1_000_000;
  }

  private interface NativeThreadVisitor {
    void visit(String comm, long cpuNanos);
  }

  private static void eachNativeThread(String pid, NativeThreadVisitor visitor) {
    Path tasks = Path.of("/proc", pid, "task");
    if (!Files.isDirectory(tasks)) {
      return;
    }
    try (Stream<Path> threads = Files.list(tasks)) {
      threads.forEach(task -> {
        try {
          String comm = Files.readString(task.resolve("comm")).strip();
          String stat = Files.readString(task.resolve("stat"));
          // Fields after the ")" that closes the name: state is field 3, utime 14, stime 15 (clock ticks).
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
          visitor.visit(comm, ticks * 10_000_000L); // USER_HZ is 100 on Linux
        } catch (IOException | RuntimeException e) {
          // The thread ended while we read it: it is counted in the rest.
        }
      });
    } catch (IOException e) {
      // The process ended.
    }
  }

  /**
   * CPU seconds per kind of thread between {@code start} and this snapshot, largest first, with the JVM's own
   * threads as the process total minus the Java threads (threads that ended in between count there too).
   */
  public Map<String, Double> since(ThreadCpu start) {
    Map<String, Double> byKind = new HashMap<>();
    double javaThreads = 0;
    for (Map.Entry<Long, Long> e : nanos.entrySet()) {
      double seconds = (e.getValue() - start.nanos.getOrDefault(e.getKey(), 0L)) / 1e9;
      byKind.merge(kind(names.get(e.getKey())), seconds, Double::sum);
      javaThreads += seconds;
    }
    double jvmKnown = 0;
    for (Map.Entry<String, Long> e : jvmNanos.entrySet()) {
      double seconds = (e.getValue() - start.jvmNanos.getOrDefault(e.getKey(), 0L)) / 1e9;
      byKind.put(e.getKey(), seconds);
      jvmKnown += seconds;
    }
    byKind.put(JVM_OWN, Math.max(0, (processNanos - start.processNanos) / 1e9 - javaThreads - jvmKnown));
    Map<String, Double> sorted = new LinkedHashMap<>();
    byKind.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .forEach(e -> sorted.put(e.getKey(), e.getValue()));
    return sorted;
  }

  /** One line: the kinds that used at least 1% of the phase's CPU, with seconds and share. */
  public static String describe(Map<String, Double> byKind) {
    double total = byKind.values().stream().mapToDouble(Double::doubleValue).sum();
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%.1f CPU-s:", total));
    byKind.forEach((kind, seconds) -> {
      if (total > 0 && seconds / total >= 0.01) {
        sb.append(String.format(Locale.ROOT, " %s %.1f s (%.0f%%);", kind, seconds, 100 * seconds / total));
      }
    });
    return sb.substring(0, sb.length() - 1);
  }

  static String kind(String threadName) {
    return NUMBER.matcher(UUID.matcher(threadName).replaceAll("#")).replaceAll("#");
  }
}
