package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.Result;
import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.edge.app.PipelineRuntime;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What a feature costs the write path, in one command: the fan-out benchmark's workload (same seed, same sizes)
 * drained at full speed with the feature on, then off, each as a ratio to the same ceiling (a raw producer of
 * inbox-entry-sized records), and their quotient. The drain is {@link FanoutDrain}'s: warm-up until the JIT is quiet,
 * a backlog produced with the apps paused, timed from the first inbox entry until every follower app has consumed
 * the last. By default the off drain comes second, in a JVM warmed by the first ({@code --cost-off-first 1}: the
 * other way round).
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
    result.setup(n + " cost: order", offFirst ? n + " off, then on (--cost-off-first 1)" : n + " on, then off");
    double[] ratios = new double[2];
    boolean first = true;
    for (boolean on : offFirst ? new boolean[] {false, true} : new boolean[] {true, false}) {
      String state = n + " " + (on ? "on" : "off");
      Map<String, String> env = new java.util.HashMap<>(subject.env(on));
      env.put("IM_LARGE_GROUP_THRESHOLD", threshold);
      PipelineRuntime runtime = cluster.run(subject.components(on), env);
      subject.prepare(on, cluster, workload, runtime);
      FanoutDrain drain = new FanoutDrain(cluster, runtime, workload, subject.followers(on, cluster));
      if (first) {
        drain.joins(result, log);
        first = false;
      }
      result.setup(n + " cost: warm-up, " + state, drain.warmUp(warmup, warmupRounds));
      FanoutDrain.Drained d = drain.drain(messages, result, log, "drain, " + state,
          n + " cost: messages produced (apps paused), " + state);
      double ratio = d.rate() / ceiling;
      result.figure(state + ": inbox entries written and consumed (full speed)", d.rate(), "entries/s");
      result.figure(state + ": drain / ceiling", ratio, "ratio");
      result.figure(state + ": CPU per 1,000 messages, this JVM", d.cpu().self() * 1000 / messages, "CPU-s");
      result.figure(state + ": CPU per 1,000 messages, broker JVM", d.cpu().broker() * 1000 / messages, "CPU-s");
      result.figure(state + ": JIT compilers' share of this JVM's CPU in the drain",
          FanoutScenario.jitShare(d.threads()), "ratio");
      cluster.step(String.format(Locale.ROOT, "%s: %,d entries in %.1f s = %,.0f entries/s (%.0f%% of the "
          + "ceiling's %,.0f records/s)", state, d.entries(), d.seconds(), d.rate(), ratio * 100, ceiling));
      cluster.stop(runtime);
      ratios[on ? 0 : 1] = ratio;
    }
    double quotient = ratios[0] / ratios[1];
    result.figure(n + " on / " + n + " off (ratios to the ceiling)", quotient, "ratio", ">= 0.9", quotient >= 0.9);
  }
}
