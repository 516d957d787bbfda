package dev.impipe.bench;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The options of {@code bin/im bench SCENARIO}, parsed by picocli: every scenario is a subcommand that declares its
 * settings ({@link #SCENARIOS}), so {@code bin/im bench SCENARIO --help} lists them and a misspelt one is an error.
 *
 * @param scenario fanout, sync, ackwheel, delay, scale or push
 * @param scale multiplier of the scenario's default sizes ({@code small} = 0.05, {@code default} = 1)
 * @param bootstrap an existing broker to use instead of starting one
 * @param registry an existing schema registry to use instead of starting one
 * @param outDir where results go
 * @param settings scenario settings given as {@code --name value} (e.g. {@code --duration 20}), by name
 * @param command the command line, for the report
 */
public record BenchOptions(String scenario, double scale, Optional<String> bootstrap, Optional<String> registry,
    Path outDir, Map<String, String> settings, String command) {

  public static final double SMALL = 0.05;

  /** A scenario setting: {@code --name LABEL}, what it is and its default. */
  record Setting(String name, String label, String description) {}

  /** A scenario: its description and its settings. */
  record ScenarioSpec(String description, List<Setting> settings) {}

  private static final String COUNT = "; counts scale with --scale and take 20k, 1.5m";

  /** Every scenario with its settings (defaults at --scale default). */
  static final Map<String, ScenarioSpec> SCENARIO_SPECS = scenarios();

  public static final List<String> SCENARIOS = List.copyOf(SCENARIO_SPECS.keySet());

  private static Map<String, ScenarioSpec> scenarios() {
    Map<String, ScenarioSpec> m = new LinkedHashMap<>();
    m.put("fanout", new ScenarioSpec("users x groups (mostly small, a few of thousands), half direct / half group "
        + "messages: inbox entries/s at full speed (exactly-once), then sentAt -> visible latency at half rate",
        List.of(new Setting("users", "N", "users (50k" + COUNT + ")"),
            new Setting("groups", "N", "groups (10k, scales)"),
            new Setting("large-groups", "N", "groups of --large-size members (4, scales)"),
            new Setting("large-size", "N", "members of a large group (4000)"),
            new Setting("messages", "N", "messages sent at full speed (200k, scales)"),
            new Setting("warmup", "N", "messages of one warm-up round, fanned out first and not measured, so the JIT "
                + "has compiled the fan-out path before the full-speed phase (100k, scales; 0: none)"),
            new Setting("warmup-rounds", "N", "warm-up rounds at most: the warm-up ends after a round in which the "
                + "JIT compilers took under 5% of the JVM's CPU (8)"),
            new Setting("duration", "SECONDS", "the half-rate latency phase (30; 10 at --scale small)"),
            new Setting("large-group-threshold", "N", "members from which a group is read from its own timeline "
                + "(1000; 0: write diffusion only, to compare with hybrid mode)"),
            new Setting("settle", "SECONDS", "seconds at half rate before the latency phase measures, recorded "
                + "apart: until both JVMs' JIT compilers have caught up with the steady load (45)"),
            new Setting("load-jvm", "0|1", "1: the latency phase's load generator runs in a JVM of its own "
                + "instead of a thread of the app's (0)"),
            new Setting("stages", "0|1", "1: also record the latency's legs (sentAt -> message on im.messages, "
                + "sentAt -> inbox entry appended before its commit) with two more consumers (0)"))));
    m.put("sync", new ScenarioSpec("fanout's data, then GET /v1/users/U/devices/D/sync?limit=50 for random users "
        + "at fixed concurrency: requests/s and latency; also runs wrk if it is installed",
        List.of(new Setting("users", "N", "users (5k" + COUNT + ")"),
            new Setting("groups", "N", "groups (1k, scales)"),
            new Setting("messages", "N", "messages (60k, scales)"),
            new Setting("concurrency", "N", "connections of the closed loop (8)"),
            new Setting("duration", "SECONDS", "each measured phase (30; 8 at --scale small)"),
            new Setting("limit", "N", "entries per sync page (50)"),
            new Setting("large-groups", "N", "groups of --large-size members (0)"),
            new Setting("large-size", "N", "members of a large group (2000)"),
            new Setting("large-group-threshold", "N", "members from which a group is read from its own timeline "
                + "(1000)"),
            new Setting("open-connections", "N", "connections of wrk's open loop (16)"))));
    m.put("ackwheel", new ScenarioSpec("deliveries at a fixed rate, most ACKed after a random delay, a known share "
        + "never ACKed: sustained rate, timeout lateness, peak pending, heap after GC; --rate max: as fast as the "
        + "broker takes them for 15 s, then the time the wheel needs to catch up",
        List.of(new Setting("rate", "N|max", "deliveries per second (5000; 1000 at --scale small)"),
            new Setting("duration", "SECONDS", "how long deliveries are sent (60; 15 with --rate max; 8 at --scale "
                + "small)"),
            new Setting("never-acked", "FRACTION", "share of deliveries never ACKed (0.1)"),
            new Setting("tick", "DURATION", "the wheel's slot, e.g. 1s or 200ms (1s; 200ms at --scale small)"),
            new Setting("timeout", "DURATION", "the ACK timeout (10s; 2s at --scale small)"),
            new Setting("users", "N", "users (100k" + COUNT + ")"),
            new Setting("warmup-seconds", "SECONDS", "load of one warm-up round, same shape and rate on other users, "
                + "not measured (5 with --rate max, else 10; 2 at --scale small)"),
            new Setting("warmup-rounds", "N", "warm-up rounds at most: the warm-up ends after a round in which the "
                + "JIT compilers took under 5% of the JVM's CPU (8; 1 at --scale small; 0: none)"))));
    m.put("delay", new ScenarioSpec("schedules spread over a window plus a burst due in the same millisecond: "
        + "scheduling rate, burst drain time, lateness, heap after GC",
        List.of(new Setting("spread", "N", "schedules due evenly over the window (200k" + COUNT + ")"),
            new Setting("window", "SECONDS", "the window (30; 5 at --scale small)"),
            new Setting("burst", "N", "schedules due in one millisecond after the window (1m, scales)"),
            new Setting("lead", "SECONDS|auto", "from the first schedule produced to the window's start (auto: "
                + "enough to produce them all)"))));
    m.put("scale", new ScenarioSpec("pending ACK timers and scheduled records held at once (due in 7 days): heap "
        + "after GC, RSS before/after, state on disk, load rates and what 10M of each would take",
        List.of(new Setting("timers", "N", "pending ACK timers (1m" + COUNT + ")"),
            new Setting("schedules", "N", "scheduled records (1m, scales)"))));
    m.put("push", new ScenarioSpec("WebSocket devices on the push gateway (one client JVM), direct messages between "
        + "them at full speed then at half rate, every entry ACKed: connections held, pushes/s, send -> device "
        + "latency, ACKs written, AckTimeouts for ACKed pushes (0), inbox read amplification (gateways' bytes read / "
        + "bytes written), redirects followed, heap and RSS",
        List.of(new Setting("devices", "N", "WebSocket devices, one user each (10k" + COUNT + ")"),
            new Setting("duration", "SECONDS", "each measured phase (20; 8 at --scale small)"),
            new Setting("warmup", "SECONDS", "one warm-up round at full speed before measuring (20; 0 at --scale "
                + "small: none)"),
            new Setting("warmup-rounds", "N", "warm-up rounds at most: the warm-up ends after a round in which the "
                + "JIT compilers of every JVM (pipeline, broker, this one) used under 5% of its CPU (8)"),
            new Setting("pending", "N", "pushes sent and not yet delivered at most, at full speed (20k, scales)"),
            new Setting("stages", "0|1", "1: also split send -> device into legs (sentAt -> inbox entry committed, "
                + "-> gateway reader polled it, -> frame queued on the socket, -> written) with each JVM's CPU per "
                + "second, per phase (0)"),
            new Setting("catch-up", "0|1", "1: the half-rate phase starts only once every Streams app applied what "
                + "it was behind on after the full-speed phase (0)"),
            new Setting("heap-mb", "N", "the pipeline JVM's largest heap, MB (1024)"),
            new Setting("gateways", "N", "all-in-one pipeline JVMs on the same broker, 1 to 8; above 1 each reads "
                + "only its own inbox partitions (IM_PUSH_READ=owned), devices connect to a random one and follow "
                + "its redirect, and the figures add the inbox read amplification (1)"))));
    m.put("abuse", new ScenarioSpec("a normal sync load (own JVM) alone, then at the same rate while one account "
        + "runs the worst abuse at once (timeline waits, a send flood, WebSockets and HTTP connections that never "
        + "read fat backlogs): the normal load's p99 with and without, the pipeline's heap and RSS, the attacker's "
        + "answers",
        List.of(new Setting("users", "N", "users of the normal load (2k" + COUNT + ")"),
            new Setting("groups", "N", "groups (400, scales)"),
            new Setting("messages", "N", "messages (20k, scales)"),
            new Setting("duration", "SECONDS", "each measured phase (20; 8 at --scale small)"),
            new Setting("waiters", "N", "the attacker's parallel never-satisfiable timeline waits (24)"),
            new Setting("sockets", "N", "the attacker's WebSockets that never read (300; 30 at --scale small)"),
            new Setting("slow-readers", "N", "the attacker's HTTP connections that never read (20)"),
            new Setting("flood-rate", "N", "the attacker's sends per second (200)"),
            new Setting("fat", "N", "entries of 10,000 control characters in the attacker's inbox (300, scales)"))));
    m.put("conversations", new ScenarioSpec("one user with many conversations (one direct message from each of "
        + "as many senders), then GET /v1/users/u0/conversations?limit=50: requests/s in a closed loop, p99 at "
        + "half that rate (target <= 10 ms); then the list's cost: fanout's workload drained by fan-out + inbox store "
        + "with the list on and off in alternating rounds, each as a ratio to the ceiling, and the quotient of the means "
        + "(target >= 0.9)",
        List.of(new Setting("conversations", "N", "conversations of the user (1000)"),
            new Setting("concurrency", "N", "connections of the closed loop and of the open loop (4)"),
            new Setting("duration", "SECONDS", "each measured phase (20; 5 at --scale small)"),
            new Setting("limit", "N", "conversations per page (50)"),
            new Setting("cost", "0|1", "1: also measure the list's cost on the write path, list on vs off (1)"),
            new Setting("cost-off-first", "0|1", "1: start with the list off (0: on first)"),
            new Setting("cost-rounds", "N", "cost phase: rounds of an on and an off drain, order turned each (2)"),
            new Setting("users", "N", "cost phase: users (50k" + COUNT + ")"),
            new Setting("groups", "N", "cost phase: groups (10k, scales)"),
            new Setting("large-groups", "N", "cost phase: groups of --large-size members (4, scales)"),
            new Setting("large-size", "N", "cost phase: members of a large group (4000)"),
            new Setting("messages", "N", "cost phase: messages of each drain (200k, scales)"),
            new Setting("warmup", "N", "cost phase: messages of one warm-up round (100k, scales; 0: none)"),
            new Setting("warmup-rounds", "N", "cost phase: warm-up rounds at most (8)"),
            new Setting("large-group-threshold", "N", "cost phase: members from which a group is read-diffused "
                + "(1000)"))));
    m.put("notify", new ScenarioSpec("registered devices that receive nothing (webhook provider to a local "
        + "receiver), one message per device and conversation: decisions/s and sent/s from a backlog due at once, "
        + "then entry -> provider latency at half that rate (target p99 <= IM_NOTIFY_AFTER + 1 s); then fanout's "
        + "workload drained with notify on (a device registered for every user) and off: each ratio to the ceiling "
        + "and their quotient",
        List.of(new Setting("devices", "N", "registered devices, one user each (20k" + COUNT + ")"),
            new Setting("backlog", "N", "messages of the full-speed phase (100k, scales)"),
            new Setting("duration", "SECONDS", "the half-rate phase (20; 8 at --scale small)"),
            new Setting("cost", "0|1", "1: also measure notify's cost on the fan-out, on vs off (1)"),
            new Setting("cost-off-first", "0|1", "1: start with notify off (0: on first)"),
            new Setting("cost-rounds", "N", "cost phase: rounds of an on and an off drain, order turned each (2)"),
            new Setting("users", "N", "cost phase: users (50k" + COUNT + ")"),
            new Setting("groups", "N", "cost phase: groups (10k, scales)"),
            new Setting("messages", "N", "cost phase: messages of each drain (200k, scales)"),
            new Setting("warmup", "N", "cost phase: messages of one warm-up round (100k, scales; 0: none)"),
            new Setting("warmup-rounds", "N", "cost phase: warm-up rounds at most (8)"),
            new Setting("large-groups", "N", "cost phase: groups of --large-size members (4, scales)"),
            new Setting("large-size", "N", "cost phase: members of a large group (4000)"),
            new Setting("large-group-threshold", "N", "cost phase: members from which a group is read-diffused "
                + "(1000)"))));
    return java.util.Collections.unmodifiableMap(m);
  }

  /** The options every scenario takes (the setting {@code ceiling-records} sizes the ProducerPerformance run). */
  private static final List<Setting> COMMON = List.of(
      new Setting("scale", "small|default|FACTOR", "multiplier of the default sizes (small = 0.05: what the "
          + "integration tests run)"),
      new Setting("bootstrap", "HOST:PORT", "an existing Kafka broker (default: KAFKA_BOOTSTRAP_SERVERS, else one "
          + "is started)"),
      new Setting("registry", "URL", "an existing schema registry (default: SCHEMA_REGISTRY_URL, else one is "
          + "started)"),
      new Setting("out", "DIR", "where the results go (default bench-results)"),
      new Setting("ceiling-records", "N", "records of the ProducerPerformance ceiling run (about 6 s of them, at "
          + "least 20k)"));

  /**
   * The command line of {@code bin/im bench}: a subcommand per scenario with its settings, {@code jmh} (options go
   * to JMH as they are) and {@code help}.
   */
  public static CommandLine commandLine() {
    CommandSpec root = CommandSpec.create().name("bin/im bench").mixinStandardHelpOptions(true);
    root.usageMessage().description(
        "Starts a Kafka broker (own JVM) and a schema registry (Apicurio, own JVM) unless --bootstrap / --registry "
            + "(or KAFKA_BOOTSTRAP_SERVERS / SCHEMA_REGISTRY_URL) are given, creates the pipeline's topics under a "
            + "prefix of their own (bench-SCENARIO-TIME.), runs Kafka's ProducerPerformance against the broker as "
            + "the ceiling, then the scenario, and writes bench-results/SCENARIO-TIME.{json,md,svg} (--out DIR to "
            + "change). Progress goes to stderr. Everything it started is stopped and deleted at the end.")
        .footer("", "bin/im bench SCENARIO --help lists a scenario's settings (defaults at --scale default).");
    CommandLine cl = new CommandLine(root);
    SCENARIO_SPECS.forEach((name, scenario) -> {
      CommandSpec sub = CommandSpec.create().name(name).mixinStandardHelpOptions(true);
      sub.usageMessage().description(literal(scenario.description()));
      for (Setting setting : COMMON) {
        sub.addOption(option(setting));
      }
      for (Setting setting : scenario.settings()) {
        sub.addOption(option(setting));
      }
      cl.addSubcommand(name, new CommandLine(sub));
    });
    CommandSpec jmh = CommandSpec.create().name("jmh");
    jmh.usageMessage().description("microbenchmarks of the hot paths; the options go to JMH (default: -f 1 -wi 3 "
        + "-i 5 -w 1s -r 1s; -h lists them)");
    jmh.parser().unmatchedArgumentsAllowed(true);
    cl.addSubcommand("jmh", new CommandLine(jmh));
    cl.addSubcommand("help", new CommandLine.HelpCommand());
    return cl;
  }

  private static OptionSpec option(Setting setting) {
    return OptionSpec.builder("--" + setting.name()).paramLabel(setting.label()).type(String.class)
        .description(literal(setting.description())).build();
  }

  /** A text picocli prints as written: it formats descriptions, where "5%" would be a format specifier. */
  static String literal(String text) {
    return text.replace("%", "%%");
  }

  /** Parses {@code args} (the scenario first, then its options); env supplies broker defaults. */
  public static BenchOptions parse(String[] args, Map<String, String> env) {
    ParseResult parsed;
    try {
      parsed = commandLine().parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    if (!parsed.hasSubcommand() || !SCENARIO_SPECS.containsKey(parsed.subcommand().commandSpec().name())) {
      throw new IllegalArgumentException("no scenario given (one of " + SCENARIOS + ")");
    }
    return from(parsed.subcommand(), env, args);
  }

  /** The options of a parsed scenario subcommand. */
  static BenchOptions from(ParseResult scenario, Map<String, String> env, String[] args) {
    double scale = 1;
    Optional<String> bootstrap = Optional.ofNullable(env.get("KAFKA_BOOTSTRAP_SERVERS")).filter(s -> !s.isBlank());
    Optional<String> registry = Optional.ofNullable(env.get("SCHEMA_REGISTRY_URL")).filter(s -> !s.isBlank());
    Path out = Path.of("bench-results");
    Map<String, String> settings = new LinkedHashMap<>();
    for (OptionSpec option : scenario.matchedOptions()) {
      if (option.usageHelp() || option.versionHelp()) {
        continue;
      }
      String name = option.longestName().substring(2);
      String value = option.getValue();
      switch (name) {
        case "scale" -> scale = parseScale(value);
        case "bootstrap" -> bootstrap = Optional.of(value);
        case "registry" -> registry = Optional.of(value);
        case "out" -> out = Path.of(value);
        default -> settings.put(name, value);
      }
    }
    return new BenchOptions(scenario.commandSpec().name(), scale, bootstrap, registry, out, Map.copyOf(settings),
        "bin/im bench " + String.join(" ", args));
  }

  static double parseScale(String value) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "small" -> SMALL;
      case "default" -> 1;
      default -> {
        double d;
        try {
          d = Double.parseDouble(value);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("--scale must be small, default or a factor such as 0.5 or 4, not '"
              + value + "'");
        }
        if (!(d > 0 && d <= 1000)) {
          throw new IllegalArgumentException("--scale must be in (0, 1000], not " + value);
        }
        yield d;
      }
    };
  }

  /** A count: the default times the scale (at least {@code min}), unless {@code --name N} was given. */
  public long count(String name, long atDefaultScale, long min) {
    String given = settings.get(name);
    if (given != null) {
      return parseCount(name, given);
    }
    return Math.max(min, Math.round(atDefaultScale * scale));
  }

  /** A setting that does not scale (durations, rates, concurrency). */
  public long fixed(String name, long defaultValue) {
    String given = settings.get(name);
    return given == null ? defaultValue : parseCount(name, given);
  }

  /** A fraction in [0, 1]. */
  public double fraction(String name, double defaultValue) {
    String given = settings.get(name);
    if (given == null) {
      return defaultValue;
    }
    double d = Double.parseDouble(given);
    if (d < 0 || d > 1) {
      throw new IllegalArgumentException("--" + name + " must be between 0 and 1");
    }
    return d;
  }

  public boolean small() {
    return scale <= SMALL;
  }

  /** 1000, 1k, 2.5m, 10M: a positive count. */
  static long parseCount(String name, String value) {
    String v = value.trim().toLowerCase(Locale.ROOT).replace("_", "");
    double mult = 1;
    if (v.endsWith("k")) {
      mult = 1e3;
      v = v.substring(0, v.length() - 1);
    } else if (v.endsWith("m")) {
      mult = 1e6;
      v = v.substring(0, v.length() - 1);
    }
    try {
      double d = Double.parseDouble(v) * mult;
      if (d < 0) {
        throw new NumberFormatException();
      }
      return Math.round(d);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " must be a count such as 500, 20k or 1.5m, not '"
          + value + "'");
    }
  }
}
