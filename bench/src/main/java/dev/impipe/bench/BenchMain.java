package dev.impipe.bench;

import dev.impipe.bench.report.Result;
import dev.impipe.bench.scenario.AckWheelScenario;
import dev.impipe.bench.scenario.DelayScenario;
import dev.impipe.bench.scenario.FanoutScenario;
import dev.impipe.bench.scenario.ScaleScenario;
import dev.impipe.bench.scenario.Scenario;
import dev.impipe.bench.scenario.SyncScenario;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/** Entry point of {@code bin/im bench SCENARIO} (options: {@link BenchOptions#commandLine()}). */
public final class BenchMain {

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

  /** Runs one scenario; returns the exit status (0 done, 1 failed, 2 a usage error). */
  public static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
    CommandLine cl = BenchOptions.commandLine();
    cl.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
    cl.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
    BenchOptions options;
    try {
      ParseResult parsed = cl.parseArgs(args);
      if (CommandLine.executeHelpRequest(parsed) != null) {
        return 0;
      }
      if (!parsed.hasSubcommand()) {
        cl.usage(out);
        return 2;
      }
      if (!BenchOptions.SCENARIOS.contains(parsed.subcommand().commandSpec().name())) {
        err.println("im bench: " + parsed.subcommand().commandSpec().name() + " runs from bin/im bench only");
        return 2;
      }
      options = BenchOptions.from(parsed.subcommand(), env, args);
    } catch (CommandLine.ParameterException e) {
      err.println("im bench: " + e.getMessage());
      err.print("Usage: " + e.getCommandLine().getHelp().synopsis(0));
      err.println("Try '" + e.getCommandLine().getCommandSpec().qualifiedName() + " --help' for more.");
      return 2;
    } catch (IllegalArgumentException e) {
      err.println("im bench: " + e.getMessage());
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
      case "abuse" -> new dev.impipe.bench.scenario.AbuseScenario();
      case "conversations" -> new dev.impipe.bench.scenario.ConversationsScenario();
      case "notify" -> new dev.impipe.bench.scenario.NotifyScenario();
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
