package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.report.Result;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.inbox.conversations.ConversationsConfig;
import dev.impipe.runtime.app.PipelineComponent;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the conversation list costs the write path ({@link OnOffCost}): fan-out and the inbox store drain the fan-out
 * workload with the list on, and off ({@code IM_CONVERSATIONS_ENABLED=false}: its materialiser is not in the
 * topology); target on >= 0.9 x off.
 */
final class ConversationsCost implements OnOffCost.Subject {

  private ConversationsCost() {}

  static void measure(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception {
    OnOffCost.measure(options, cluster, result, log, new ConversationsCost());
  }

  @Override
  public String name() {
    return "list";
  }

  @Override
  public List<PipelineComponent> components(boolean on) {
    return List.of(new FanoutComponent(), new InboxStoreComponent());
  }

  @Override
  public Map<String, String> env(boolean on) {
    return Map.of(ConversationsConfig.ENABLED.name(), Boolean.toString(on));
  }

  @Override
  public Map<String, Set<String>> followers(boolean on, BenchCluster cluster) {
    return Map.of(InboxStoreTopology.APP_NAME, Set.of(cluster.names().inbox()));
  }
}
