package dev.impipe.bench.scenario;

import dev.impipe.bench.report.ThreadCpu;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The JIT compilers' share of each of several JVMs' CPU, interval by interval: the stop rule of a warm-up whose load
 * runs through more than one JVM (the pipeline's, the broker's, the benchmark's own). A round is quiet when every
 * JVM gave its compilers less than {@link FanoutDrain#JIT_QUIET} of its CPU (ADR 0018).
 */
final class JitShares {

  /** A JVM: a name for the report and its pid. */
  record Jvm(String name, long pid) {}

  private final List<Jvm> jvms;
  private final long[] jitMs;
  private final double[] cpuSeconds;

  JitShares(List<Jvm> jvms) {
    this.jvms = List.copyOf(jvms);
    this.jitMs = new long[jvms.size()];
    this.cpuSeconds = new double[jvms.size()];
    next();
  }

  /** Each JVM's JIT share since the previous call (or since construction), in the order given; starts the next. */
  List<Double> next() {
    List<Double> shares = new ArrayList<>();
    for (int i = 0; i < jvms.size(); i++) {
      long pid = jvms.get(i).pid();
      long jit = ThreadCpu.nativeThreadMillis(pid, ThreadCpu.JIT_THREAD_NAMES);
      double cpu = ProcessHandle.of(pid).map(ThreadCpu::processSeconds).orElse(cpuSeconds[i]);
      shares.add(share(jit - jitMs[i], cpu - cpuSeconds[i]));
      jitMs[i] = jit;
      cpuSeconds[i] = cpu;
    }
    return shares;
  }

  /** The compilers' CPU over the process's, 0 when the process used none. */
  static double share(long jitMsDelta, double cpuSecondsDelta) {
    return cpuSecondsDelta <= 0 ? 0 : Math.min(1, Math.max(0, jitMsDelta / 1000.0 / cpuSecondsDelta));
  }

  /** Whether every share is under the quiet threshold. */
  static boolean quiet(List<Double> shares) {
    return shares.stream().allMatch(s -> s < FanoutDrain.JIT_QUIET);
  }

  /** "pipeline 12%, broker 7%, bench 3%". */
  String describe(List<Double> shares) {
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < jvms.size(); i++) {
      parts.add(String.format(Locale.ROOT, "%s %.0f%%", jvms.get(i).name(), 100 * shares.get(i)));
    }
    return parts.stream().collect(Collectors.joining(", "));
  }
}
