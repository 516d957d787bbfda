package dev.impipe.bench.scenario;

import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.bench.report.Progress;
import dev.impipe.bench.report.Result;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.inbox.InboxStoreTopology;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How far the push pipeline's Streams apps (fan-out, inbox store, ACK wheel) are behind their inputs: the end offsets
 * minus the committed offsets of their consumer groups, summed, from the benchmark's admin client.
 */
final class StreamsBacklog {

  private final BenchCluster cluster;
  /** App name -> the topics it reads. */
  private final Map<String, Set<String>> inputs;

  StreamsBacklog(BenchCluster cluster) {
    this.cluster = cluster;
    var names = cluster.names();
    this.inputs = Map.of(FanoutTopology.APP_NAME, Set.of(names.messages()),
        InboxStoreTopology.APP_NAME, Set.of(names.inbox(), names.deviceCursors(), names.history()),
        AckTimeoutComponent.NAME, Set.of(names.deliveries(), names.acks()));
  }

  /**
   * {@code --catch-up 1}: the half-rate phase starts once the apps have caught up. Off by default: in runs of both
   * kinds the half-rate p99 stayed within the same spread (docs/performance.md), only the wait is longer.
   */
  static boolean catchUp(BenchOptions options, Result result) {
    boolean on = options.fixed("catch-up", 0) > 0;
    String start = on ? "the full-speed pushes delivered and every Streams app (fan-out, inbox store, ACK wheel) "
        + "caught up on its inputs (--catch-up 1)" : "the full-speed pushes delivered";
    result.setup("before the half-rate phase (--catch-up)", start);
    return on;
  }

  /**
   * Records how far behind the apps are now (at full speed the inbox store falls millions of records behind: the
   * full-speed rate is not one the whole pipeline sustains) and, with {@code catchUp}, waits until they have caught
   * up, recording how long that took.
   */
  void report(Result result, PrintStream log, boolean catchUp) throws Exception {
    long behind = records();
    result.figure("records the Streams apps had not applied when the full-speed pushes were delivered", behind,
        "records");
    if (catchUp) {
      result.figure("time until they had (before the half-rate phase)", drain(log, result, behind), "s");
    }
  }

  /** Records of their inputs the apps have not committed yet, summed. */
  private long records() throws Exception {
    long lag = 0;
    for (Map.Entry<String, Set<String>> app : inputs.entrySet()) {
      lag += cluster.lag(app.getKey(), app.getValue());
    }
    return lag;
  }

  /** Waits until the apps have committed all of the {@code behind} records and more; returns the seconds it took. */
  private double drain(PrintStream log, Result result, long behind) throws Exception {
    long t0 = System.nanoTime();
    // The wait asks the broker; the progress line shows its last answer (no second round of admin requests).
    AtomicLong left = new AtomicLong(behind);
    try (Progress p = Progress.start(log, result, "Streams apps catching up", "records", behind,
        () -> behind - left.get(), () -> "", null)) {
      BenchCluster.await("every Streams app caught up", Duration.ofMinutes(10), () -> {
        left.set(recordsOr(behind));
        return left.get() == 0;
      });
    }
    return (System.nanoTime() - t0) / 1e9;
  }

  /** {@link #records}, or {@code max} when the admin client could not tell (a wait goes on). */
  private long recordsOr(long max) {
    try {
      return records();
    } catch (Exception e) {
      return max;
    }
  }
}
