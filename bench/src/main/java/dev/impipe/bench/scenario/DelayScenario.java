package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.report.Result;
import java.io.PrintStream;

/** TODO. */
public final class DelayScenario implements Scenario {
  @Override
  public void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) {
    throw new UnsupportedOperationException("not yet");
  }
}
