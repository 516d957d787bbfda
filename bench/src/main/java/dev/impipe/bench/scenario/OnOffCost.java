package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.Result;
import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.edge.app.PipelineRuntime;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a feature costs the write path, in one command: the fan-out benchmark's workload (same seed, same sizes)
 * drained at full speed with the feature on and off, each as a ratio to the same ceiling (a raw producer of
 * inbox-entry-sized records), and their quotient. The drain is {@link FanoutDrain}'s: warm-up until the JIT is quiet,
 * a backlog produced with the apps paused, timed from the first inbox entry until every follower app has consumed
 * the last. The drains alternate in rounds, on then off, then off then on ({@code --cost-rounds}, 2 by default;
 * {@code --cost-off-first 1} starts with off): a drift of the machine through the command weighs on both states
 * alike, and the quotient is of the mean ratios (ADR 0022).
 */
final class OnOffCost {

  /** The feature measured: its name in the figures, and what runs with it on or off. */
  interface Subject {
    /** {@code list}, {@code notify}: the figures read "list on: ...". */
    String name();

    /** The apps of the drain and their settings. */
    List<PipelineComponent> components(boolean on);

    Map<String, String> env(boolean on);

    /** Streams apps (by name) whose consumption of topics ends the drain, besides the fan-out. */
    Map<String, Set<String>> followers(boolean on, BenchCluster cluster);

    /** Runs once the apps have started, before the warm-up (e.g. registrations the feature works on). */
    default void prepare(boolean on, BenchCluster cluster, Workload workload, PipelineRuntime runtime)
        throws Exception {}
  }

  private OnOffCost() {}

  static void measure(BenchOptions options, BenchCluster cluster, Result result, PrintStream log, Subject subject)
      throws Exception {
    int entrySize = FanoutScenario.inboxEntrySize(cluster);
    measure(options, cluster, result, log, subject, Ceiling.measure(cluster, result,
        cluster.partitions(cluster.names().inbox()), entrySize, Ceiling.records(options, entrySize)));
  }

  /** The same against a ceiling the scenario measured already (records of an inbox entry's size). */
  static void measure(BenchOptions options, BenchCluster cluster, Result result, PrintStream log, Subject subject,
      double ceiling) throws Exception {
    String n = subject.name();
    int users = (int) options.count("users", 50_000, 1_000);
    int groups = (int) options.count("groups", 10_000, 100);
    int large = (int) options.count("large-groups", 4, 1);
    int largeSize = (int) Math.min(users, options.fixed("large-size", 4_000));
    long messages = options.count("messages", 200_000, 5_000);
    long warmup = options.count("warmup", 100_000, 0);
    long warmupRounds = Math.max(1, options.fixed("warmup-rounds", 8));
    Workload workload = new Workload(users, groups, large, largeSize, FanoutScenario.WORKLOAD_SEED,
        cluster.prefix());
    result.setup(n + " cost: workload", users + " users, " + groups + " groups (" + large + " large of up to "
        + largeSize + " members), " + workload.memberships() + " memberships; " + messages + " messages per drain, "
        + "half direct, half group (bench fanout's workload)");
    String threshold = Long.toString(options.fixed("large-group-threshold", 1_000));
    boolean offFirst = options.fixed("cost-off-first", 0) > 0;
    int rounds = (int) Math.max(1, options.fixed("cost-rounds", 2));
    List<Boolean> order = order(rounds, offFirst);
    result.setup(n + " cost: order", order.stream().map(on -> n + (on ? " on" : " off"))
        .collect(Collectors.joining(", ")) + " (--cost-rounds " + rounds
        + (offFirst ? ", --cost-off-first 1)" : ")"));
    List<List<Double>> ratios = List.of(new ArrayList<>(), new ArrayList<>());
    List<List<Double>> cpu = List.of(new ArrayList<>(), new ArrayList<>());
    for (int i = 0; i < order.size(); i++) {
      boolean on = order.get(i);
      String state = n + " " + (on ? "on" : "off");
      String drainName = state + " (drain " + (i + 1) + " of " + order.size() + ")";
      Map<String, String> env = new HashMap<>(subject.env(on));
      env.put("IM_LARGE_GROUP_THRESHOLD", threshold);
      PipelineRuntime runtime = cluster.run(subject.components(on), env);
      subject.prepare(on, cluster, workload, runtime);
      FanoutDrain drain = new FanoutDrain(cluster, runtime, workload, subject.followers(on, cluster));
      if (i == 0) {
        drain.joins(result, log);
      }
      result.setup(n + " cost: warm-up, " + drainName, drain.warmUp(warmup, warmupRounds));
      FanoutDrain.Drained d = drain.drain(messages, result, log, "drain, " + drainName,
          n + " cost: messages produced (apps paused), " + drainName);
      double ratio = d.rate() / ceiling;
      double cpuPer1000 = d.cpu().self() * 1000 / messages;
      result.figure(drainName + ": inbox entries written and consumed (full speed)", d.rate(), "entries/s");
      result.figure(drainName + ": drain / ceiling", ratio, "ratio");
      result.figure(drainName + ": CPU per 1,000 messages, this JVM", cpuPer1000, "CPU-s");
      result.figure(drainName + ": CPU per 1,000 messages, broker JVM", d.cpu().broker() * 1000 / messages,
          "CPU-s");
      result.figure(drainName + ": this JVM's garbage collectors per second of the drain", d.gcMs() / d.seconds(),
          "ms/s");
      result.figure(drainName + ": JIT compilers' share of this JVM's CPU in the drain",
          FanoutScenario.jitShare(d.threads()), "ratio");
      cluster.step(String.format(Locale.ROOT, "%s: %,d entries in %.1f s = %,.0f entries/s (%.0f%% of the "
          + "ceiling's %,.0f records/s)", drainName, d.entries(), d.seconds(), d.rate(), ratio * 100, ceiling));
      cluster.stop(runtime);
      ratios.get(on ? 0 : 1).add(ratio);
      cpu.get(on ? 0 : 1).add(cpuPer1000);
    }
    String of = " (mean of " + rounds + " drains)";
    result.figure(n + " on: drain / ceiling" + of, mean(ratios.get(0)), "ratio");
    result.figure(n + " off: drain / ceiling" + of, mean(ratios.get(1)), "ratio");
    result.figure(n + " on: CPU per 1,000 messages, this JVM" + of, mean(cpu.get(0)), "CPU-s");
    result.figure(n + " off: CPU per 1,000 messages, this JVM" + of, mean(cpu.get(1)), "CPU-s");
    for (int r = 0; r < rounds; r++) {
      result.figure(n + " on / " + n + " off, round " + (r + 1) + " alone", ratios.get(0).get(r)
          / ratios.get(1).get(r), "ratio");
    }
    double quotient = mean(ratios.get(0)) / mean(ratios.get(1));
    result.figure(n + " on / " + n + " off (mean ratios to the ceiling)", quotient, "ratio", ">= 0.9",
        quotient >= 0.9);
  }

  /**
   * The states of the drains, round by round: on then off in the first round ({@code offFirst}: off then on), the
   * other way round in the next, and so on.
   */
  static List<Boolean> order(int rounds, boolean offFirst) {
    List<Boolean> order = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      boolean onFirst = (r % 2 == 0) != offFirst;
      order.add(onFirst);
      order.add(!onFirst);
    }
    return order;
  }

  private static double mean(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
  }
}
