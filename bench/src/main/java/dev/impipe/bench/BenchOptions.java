package dev.impipe.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The options of {@code bin/im bench SCENARIO}.
 *
 * @param scenario fanout, sync, ackwheel, delay or scale
 * @param scale multiplier of the scenario's default sizes ({@code small} = 0.05, {@code default} = 1)
 * @param bootstrap an existing broker to use instead of starting one
 * @param registry an existing schema registry to use instead of starting one
 * @param outDir where results go
 * @param settings scenario settings given as {@code --name value} (e.g. {@code --duration 20})
 * @param command the command line, for the report
 */
public record BenchOptions(String scenario, double scale, Optional<String> bootstrap, Optional<String> registry,
    Path outDir, Map<String, String> settings, String command) {

  public static final List<String> SCENARIOS = List.of("fanout", "sync", "ackwheel", "delay", "scale", "push");
  public static final double SMALL = 0.05;

  /** Parses {@code args} (after the scenario name was taken as {@code args[0]}); env supplies broker defaults. */
  public static BenchOptions parse(String[] args, Map<String, String> env) {
    if (args.length == 0) {
      throw new IllegalArgumentException("no scenario given");
    }
    String scenario = args[0].toLowerCase(Locale.ROOT);
    if (!SCENARIOS.contains(scenario)) {
      throw new IllegalArgumentException("unknown scenario '" + args[0] + "' (one of " + SCENARIOS + ")");
    }
    double scale = 1;
    Optional<String> bootstrap = Optional.ofNullable(env.get("KAFKA_BOOTSTRAP_SERVERS")).filter(s -> !s.isBlank());
    Optional<String> registry = Optional.ofNullable(env.get("SCHEMA_REGISTRY_URL")).filter(s -> !s.isBlank());
    Path out = Path.of("bench-results");
    Map<String, String> settings = new LinkedHashMap<>();
    List<String> rest = new ArrayList<>(List.of(args).subList(1, args.length));
    for (int i = 0; i < rest.size(); i++) {
      String a = rest.get(i);
      if (!a.startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument '" + a + "'");
      }
      String name = a.substring(2);
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else {
        if (i + 1 >= rest.size()) {
          throw new IllegalArgumentException("--" + name + " needs a value");
        }
        value = rest.get(++i);
      }
      switch (name) {
        case "scale" -> scale = parseScale(value);
        case "bootstrap" -> bootstrap = Optional.of(value);
        case "registry" -> registry = Optional.of(value);
        case "out" -> out = Path.of(value);
        default -> settings.put(name, value);
      }
    }
    return new BenchOptions(scenario, scale, bootstrap, registry, out, Map.copyOf(settings),
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
