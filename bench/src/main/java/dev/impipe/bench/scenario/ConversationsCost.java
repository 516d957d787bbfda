package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.Ceiling;
import dev.impipe.bench.report.Result;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.inbox.conversations.ConversationsConfig;
import dev.impipe.runtime.app.PipelineRuntime;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What the conversation list costs the write path, in one command: the fan-out benchmark's workload (same seed,
 * same sizes) drained at full speed by fan-out and the inbox store together, first with the list on, then with it
 * off ({@code IM_CONVERSATIONS_ENABLED=false}: its materialiser is not in the topology), each as a ratio to the
 * same ceiling (a raw producer of inbox-entry-sized records), and their quotient (target: on >= 0.9 x off). The
 * drain is {@link FanoutDrain}'s: warm-up until the JIT is quiet, a backlog produced with both apps paused, timed
 * from the first inbox entry until the inbox store has consumed the last. By default the list-off drain comes
 * second, in a JVM warmed by the first ({@code --cost-off-first 1}: the other way round).
 */
final class ConversationsCost {

  private ConversationsCost() {}

  static void measure(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    int users = (int) options.count("users", 50_000, 1_000);
    int groups = (int) options.count("groups", 10_000, 100);
    int large = (int) options.count("large-groups", 4, 1);
    int largeSize = (int) Math.min(users, options.fixed("large-size", 4_000));
    long messages = options.count("messages", 200_000, 5_000);
    long warmup = options.count("warmup", 100_000, 0);
    long warmupRounds = Math.max(1, options.fixed("warmup-rounds", 8));
    Workload workload = new Workload(users, groups, large, largeSize, FanoutScenario.WORKLOAD_SEED,
        cluster.prefix());
    result.setup("list cost: workload", users + " users, " + groups + " groups (" + large + " large of up to "
        + largeSize + " members), " + workload.memberships() + " memberships; " + messages + " messages per drain, "
        + "half direct, half group (bench fanout's workload)");
    int entrySize = FanoutScenario.inboxEntrySize(cluster);
    double ceiling = Ceiling.measure(cluster, result, cluster.partitions(cluster.names().inbox()), entrySize,
        Ceiling.records(options, entrySize));
    String threshold = Long.toString(options.fixed("large-group-threshold", 1_000));
    // --cost-off-first 1: the list-off drain first (the second drain runs in a JVM the first has warmed).
    boolean offFirst = options.fixed("cost-off-first", 0) > 0;
    result.setup("list cost: order", offFirst ? "list off, then on (--cost-off-first 1)" : "list on, then off");
    double[] ratios = new double[2];
    boolean first = true;
    for (boolean enabled : offFirst ? new boolean[] {false, true} : new boolean[] {true, false}) {
      String state = enabled ? "on" : "off";
      PipelineRuntime runtime = cluster.run(List.of(new FanoutComponent(), new InboxStoreComponent()),
          Map.of(ConversationsConfig.ENABLED.name(), Boolean.toString(enabled), "IM_LARGE_GROUP_THRESHOLD",
              threshold));
      FanoutDrain drain = new FanoutDrain(cluster, runtime, workload,
          Map.of(InboxStoreTopology.APP_NAME, Set.of(cluster.names().inbox())));
      if (first) {
        drain.joins(result, log);
        first = false;
      }
      result.setup("list cost: warm-up, list " + state, drain.warmUp(warmup, warmupRounds));
      FanoutDrain.Drained d = drain.drain(messages, result, log, "fan-out + inbox store, list " + state,
          "list cost: messages produced (apps paused), list " + state);
      double ratio = d.rate() / ceiling;
      result.figure("list " + state + ": inbox entries fanned out and stored (full speed)", d.rate(), "entries/s");
      result.figure("list " + state + ": fan-out + inbox store / ceiling", ratio, "ratio");
      result.figure("list " + state + ": CPU per 1,000 messages, this JVM (fan-out + inbox store)",
          d.cpu().self() * 1000 / messages, "CPU-s");
      result.figure("list " + state + ": JIT compilers' share of this JVM's CPU in the drain",
          FanoutScenario.jitShare(d.threads()), "ratio");
      cluster.step(String.format(Locale.ROOT, "list %s: %,d entries in %.1f s = %,.0f entries/s (%.0f%% of the "
          + "ceiling's %,.0f records/s)", state, d.entries(), d.seconds(), d.rate(), ratio * 100, ceiling));
      cluster.stop(runtime);
      ratios[enabled ? 0 : 1] = ratio;
    }
    double quotient = ratios[0] / ratios[1];
    result.figure("list on / list off (ratios to the ceiling)", quotient, "ratio", ">= 0.9", quotient >= 0.9);
  }
}
