package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.report.Result;
import java.io.PrintStream;

/** One benchmark: runs against a started cluster and fills in a result. */
public interface Scenario {

  /** Runs the scenario; everything it starts is stopped when this returns (the cluster closes the rest). */
  void run(BenchOptions options, BenchCluster cluster, Result result, PrintStream log) throws Exception;
}
