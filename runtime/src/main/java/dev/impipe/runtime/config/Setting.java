package dev.impipe.runtime.config;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One environment variable, declared once: its name, type, default, validation, documentation sentence and whether
 * it is a secret. A {@link ConfigTable} groups the settings of a component; the README's configuration tables are
 * rendered from them, and the effective values are logged with secrets masked. Reading a value goes through
 * {@link Env}, so every error names the variable and the bad value.
 *
 * @param <T> the parsed value's type; a setting without a default reads as absent ({@link ConfigValues#optional})
 */
public final class Setting<T> {

  /** How a masked secret is shown. */
  public static final String MASK = "****";

  private final String name;
  private final String type;
  private final String defaultText;
  private final String doc;
  private final boolean secret;
  private final boolean readByJava;
  private final Function<Env, T> reader;

  private Setting(String name, String type, String defaultText, String doc, boolean secret, boolean readByJava,
      Function<Env, T> reader) {
    this.name = Objects.requireNonNull(name, "name");
    this.type = Objects.requireNonNull(type, "type");
    this.defaultText = Objects.requireNonNull(defaultText, "defaultText");
    this.doc = Objects.requireNonNull(doc, "doc");
    this.secret = secret;
    this.readByJava = readByJava;
    this.reader = Objects.requireNonNull(reader, "reader");
  }

  /** A whole number in {@code [min, max]}. */
  public static Setting<Integer> integer(String name, int defaultValue, int min, int max, String doc) {
    return new Setting<>(name, "integer", "`" + defaultValue + "`", doc, false, true,
        env -> env.integer(name, defaultValue, min, max));
  }

  /** A whole number in {@code [min, max]}. */
  public static Setting<Long> longValue(String name, long defaultValue, long min, long max, String doc) {
    return new Setting<>(name, "integer", "`" + defaultValue + "`", doc, false, true,
        env -> env.longValue(name, defaultValue, min, max));
  }

  /**
   * A duration in {@code [min, max]}, each written as a user would (plain millis or {@code ms}, {@code s},
   * {@code m}, {@code h}, {@code d}): {@code duration("IM_X", "30s", "0", "10m", ...)}.
   */
  public static Setting<Duration> duration(String name, String defaultValue, String min, String max, String doc) {
    long defaultMs = parseDurationMs(defaultValue);
    long minMs = parseDurationMs(min);
    long maxMs = parseDurationMs(max);
    return new Setting<>(name, "duration", "`" + defaultValue + "`", doc, false, true,
        env -> Duration.ofMillis(env.durationMs(name, defaultMs, minMs, maxMs)));
  }

  /** A duration in {@code [min, max]} without a fixed default (it depends on other settings): absent when unset. */
  public static Setting<Duration> duration(String name, String min, String max, String doc) {
    long minMs = parseDurationMs(min);
    long maxMs = parseDurationMs(max);
    return new Setting<>(name, "duration", "", doc, false, true,
        env -> env.optional(name).isEmpty() ? null : Duration.ofMillis(env.durationMs(name, 0, minMs, maxMs)));
  }

  /** Text with a default. */
  public static Setting<String> string(String name, String defaultValue, String doc) {
    return new Setting<>(name, "string", "`" + defaultValue + "`", doc, false, true,
        env -> env.string(name, defaultValue));
  }

  /** Text without a default: absent when unset or blank. */
  public static Setting<String> optional(String name, String doc) {
    return new Setting<>(name, "string", "", doc, false, true, env -> env.optional(name).orElse(null));
  }

  /** {@code true}/{@code yes}/{@code 1} or {@code false}/{@code no}/{@code 0}. */
  public static Setting<Boolean> bool(String name, boolean defaultValue, String doc) {
    return new Setting<>(name, "boolean", "`" + defaultValue + "`", doc, false, true, env -> {
      Optional<String> raw = env.optional(name);
      if (raw.isEmpty()) {
        return defaultValue;
      }
      return switch (raw.get().toLowerCase(Locale.ROOT)) {
        case "true", "yes", "1" -> true;
        case "false", "no", "0" -> false;
        default -> throw new InvalidConfigException(name + "='" + raw.get() + "' is invalid: expected true or false");
      };
    });
  }

  /**
   * A value parsed by {@code parse} from the trimmed text (absent when unset, unless {@code defaultValue} is not
   * null); {@code parse} throws {@link InvalidConfigException} naming the variable.
   */
  public static <T> Setting<T> parsed(String name, String type, T defaultValue, Function<String, T> parse,
      String doc) {
    return new Setting<>(name, type, defaultValue == null ? "" : "`" + defaultValue + "`", doc, false, true,
        env -> env.optional(name).map(parse).orElse(defaultValue));
  }

  /**
   * A variable documented with the pipeline's settings but read outside Java ({@code bin/im}) or matched by a
   * pattern ({@code KAFKA_*}): it has a row in the README and no value of its own.
   */
  public static Setting<String> documented(String name, String defaultText, String doc) {
    return new Setting<>(name, "string", defaultText, doc, false, false, env -> env.optional(name).orElse(null));
  }

  /** This setting as a secret: its value is logged as {@value #MASK}. */
  public Setting<T> secret() {
    return new Setting<>(name, type, defaultText, doc, true, readByJava, reader);
  }

  /** This setting with the README's default column written out (a default that depends on other settings). */
  public Setting<T> defaultDoc(String text) {
    return new Setting<>(name, type, text, doc, secret, readByJava, reader);
  }

  /** This setting, also checked by {@code valid}: otherwise "NAME='value' is invalid: expected {@code expected}". */
  public Setting<T> validate(Predicate<? super T> valid, String expected) {
    return new Setting<>(name, type, defaultText, doc, secret, readByJava, env -> {
      T value = reader.apply(env);
      if (value != null && !valid.test(value)) {
        throw new InvalidConfigException(name + "='" + env.optional(name).orElse(String.valueOf(value))
            + "' is invalid: expected " + expected);
      }
      return value;
    });
  }

  /** The value in {@code environment} (the default when unset; null when unset without a default). */
  public T read(Map<String, String> environment) {
    return read(new Env(environment));
  }

  /** True when {@code environment} gives this variable a value (not blank). */
  public boolean isSet(Map<String, String> environment) {
    return new Env(environment).optional(name).isPresent();
  }

  T read(Env env) {
    try {
      return reader.apply(env);
    } catch (InvalidConfigException e) {
      // The message names the variable and shows the bad value, except a secret's: that is masked as in the log.
      String raw = env.optional(name).orElse("");
      if (secret && !raw.isEmpty() && e.getMessage().contains(raw)) {
        throw new InvalidConfigException(e.getMessage().replace(raw, MASK));
      }
      throw e;
    }
  }

  public String name() {
    return name;
  }

  public String type() {
    return type;
  }

  /** The README's default column (markdown); empty when there is none. */
  public String defaultText() {
    return defaultText;
  }

  public String doc() {
    return doc;
  }

  public boolean isSecret() {
    return secret;
  }

  /** False for a variable only documented here ({@link #documented}). */
  public boolean isReadByJava() {
    return readByJava;
  }

  /** How {@code value} appears in the start-up log: secrets masked, durations in the largest whole unit. */
  public String show(Object value) {
    if (value == null) {
      // A default that depends on other settings: say which, as the README does.
      String dflt = defaultText.replace("`", "");
      dflt = dflt.startsWith("(") && dflt.endsWith(")") ? dflt.substring(1, dflt.length() - 1) : dflt;
      return dflt.isEmpty() ? "(unset)" : "(unset: " + dflt + ")";
    }
    if (secret) {
      return MASK;
    }
    if (value instanceof Optional<?> o) {
      return o.isEmpty() ? "(unset)" : show(o.get());
    }
    if (value instanceof Duration d) {
      return formatDuration(d.toMillis());
    }
    return value.toString();
  }

  @Override
  public String toString() {
    return name;
  }

  /** {@code 90000} -> {@code 90s}, {@code 86400000} -> {@code 1d}. */
  static String formatDuration(long ms) {
    if (ms == Long.MAX_VALUE) {
      return "forever";
    }
    long[] units = {86_400_000, 3_600_000, 60_000, 1_000};
    String[] suffixes = {"d", "h", "m", "s"};
    for (int i = 0; i < units.length; i++) {
      if (ms != 0 && ms % units[i] == 0) {
        return ms / units[i] + suffixes[i];
      }
    }
    return ms + "ms";
  }

  private static long parseDurationMs(String text) {
    return new Env(Map.of("duration", text)).durationMs("duration", 0, 0, Long.MAX_VALUE);
  }
}
