package dev.impipe.bench;

import dev.impipe.bench.report.Result;
import dev.impipe.bench.scenario.AckWheelScenario;
import dev.impipe.bench.scenario.DelayScenario;
import dev.impipe.bench.scenario.FanoutScenario;
import dev.impipe.bench.scenario.ScaleScenario;
import dev.impipe.bench.scenario.Scenario;
import dev.impipe.bench.scenario.SyncScenario;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Entry point of {@code bin/im bench SCENARIO}. */
public final class BenchMain {

  static final String USAGE = """
      usage: bin/im bench SCENARIO [--scale small|default|FACTOR] [--bootstrap HOST:PORT --registry URL]
                                   [--out DIR] [--SETTING VALUE ...]
             bin/im bench jmh [JMH options]       microbenchmarks (default: -f 1 -wi 3 -i 5 -w 1s -r 1s)

      Starts a Kafka broker (own JVM) and a schema registry (Apicurio, own JVM) unless --bootstrap / --registry
      (or KAFKA_BOOTSTRAP_SERVERS / SCHEMA_REGISTRY_URL) are given, creates the pipeline's topics under a prefix
      of their own (bench-SCENARIO-TIME.), runs Kafka's ProducerPerformance against the broker as the ceiling,
      then the scenario, and writes bench-results/SCENARIO-TIME.{json,md,svg} (--out DIR to change).
      Progress goes to stderr. Everything it started is stopped and deleted at the end.

      scenarios (settings in brackets, defaults at --scale default; counts scale with --scale, others do not):
        fanout    users x groups (mostly small, a few of thousands), half direct / half group messages:
                  inbox entries/s at full speed (exactly-once), then sentAt -> visible latency at half rate
                  [--users 50k --groups 10k --large-groups 4 --large-size 4000 --messages 200k --duration 30
             --large-group-threshold 1000 (0: write diffusion only, to compare with hybrid mode)]
        sync      fanout's data, then GET /v1/users/U/devices/D/sync?limit=50 for random users at fixed
                  concurrency: requests/s and latency; also runs wrk if it is installed
                  [--users 5k --groups 1k --messages 60k --concurrency 8 --duration 30
             --large-groups 0 --large-size 2000 --large-group-threshold 1000]
        ackwheel  deliveries at a fixed rate, most ACKed after a random delay, a known share never ACKed:
                  sustained rate, timeout lateness, peak pending, heap after GC
                  [--rate 5000 --duration 60 --never-acked 0.1 --tick 1s --timeout 10s --users 100k];
                  --rate max: as fast as the broker takes them for 15 s, then the time the wheel needs to catch up
        delay     schedules spread over a window plus a burst due in the same millisecond: scheduling rate,
                  burst drain time, lateness, heap after GC
                  [--spread 200k --window 30 --burst 1m --lead auto]
        scale     pending ACK timers and scheduled records held at once (due in 7 days): heap after GC, RSS
                  before/after, state on disk, load rates and what 10M of each would take
                  [--timers 1m --schedules 1m]
        push      WebSocket devices on the push gateway (one client JVM), direct messages between them at full
                  speed then at half rate, every entry ACKed: connections held, pushes/s, send -> device
                  latency, ACKs written, AckTimeouts for ACKed pushes (0), heap and RSS
                  [--devices 10k --duration 20 --warmup 20 (0 at --scale small) --pending 20k]
      --scale small is what the integration tests run (about 1/20 of the default sizes).
      """;

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("jmh")) {
      String[] rest = Arrays.copyOfRange(args, 1, args.length);
      org.openjdk.jmh.Main.main(rest.length == 0 ? new String[] {"-f", "1", "-wi", "3", "-i", "5", "-w", "1s",
          "-r", "1s"} : rest);
      return;
    }
    int status = run(args, System.getenv(), System.out, System.err);
    System.out.flush();
    System.err.flush();
    // Kafka clients and RocksDB leave non-daemon threads behind only when something failed to close; do not hang.
    System.exit(status);
  }

  /** Runs one scenario; returns the exit status. */
  public static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
    if (args.length == 0 || List.of("help", "--help", "-h").contains(args[0])) {
      out.print(USAGE);
      return args.length == 0 ? 2 : 0;
    }
    BenchOptions options;
    try {
      options = BenchOptions.parse(args, env);
    } catch (IllegalArgumentException e) {
      err.println("im bench: " + e.getMessage());
      err.print(USAGE);
      return 2;
    }
    try {
      Path json = runScenario(options, err);
      out.println("results: " + json.toAbsolutePath());
      return 0;
    } catch (Exception e) {
      err.println("im bench " + options.scenario() + " failed: " + e);
      e.printStackTrace(err);
      return 1;
    }
  }

  /** Runs the scenario of {@code options} and writes its results; returns the JSON file. */
  public static Path runScenario(BenchOptions options, PrintStream log) throws Exception {
    Scenario scenario = switch (options.scenario()) {
      case "fanout" -> new FanoutScenario();
      case "sync" -> new SyncScenario();
      case "ackwheel" -> new AckWheelScenario();
      case "delay" -> new DelayScenario();
      case "scale" -> new ScaleScenario();
      case "push" -> new dev.impipe.bench.scenario.PushScenario();
      default -> throw new IllegalArgumentException(options.scenario());
    };
    Result result = new Result(options.scenario(), options.command());
    result.setup("scale", options.scale());
    try (BenchCluster cluster = BenchCluster.start(options, log)) {
      scenario.run(options, cluster, result, log);
    }
    Path json = result.write(options.outDir());
    log.println();
    log.print(result.markdown(json.getFileName().toString().replace(".json", ".svg")));
    return json;
  }
}
