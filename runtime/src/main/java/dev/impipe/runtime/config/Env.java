package dev.impipe.runtime.config;

import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/** Typed reads of an environment map; every error names the variable. */
public final class Env {

  private final Map<String, String> env;

  public Env(Map<String, String> env) {
    this.env = Map.copyOf(env);
  }

  public Optional<String> optional(String name) {
    String value = env.get(name);
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
  }

  public String string(String name, String defaultValue) {
    return optional(name).orElse(defaultValue);
  }

  public String string(String name, String defaultValue, Predicate<String> valid, String expected) {
    String value = string(name, defaultValue);
    if (!valid.test(value)) {
      throw new InvalidConfigException(name + "='" + value + "' is invalid: expected " + expected);
    }
    return value;
  }

  public int integer(String name, int defaultValue, int min, int max) {
    return (int) longValue(name, defaultValue, min, max);
  }

  public long longValue(String name, long defaultValue, long min, long max) {
    Optional<String> raw = optional(name);
    if (raw.isEmpty()) {
      return defaultValue;
    }
    long value;
    try {
      value = Long.parseLong(raw.get());
    } catch (NumberFormatException e) {
      throw new InvalidConfigException(name + "='" + raw.get() + "' is not a whole number");
    }
    if (value < min || value > max) {
      throw new InvalidConfigException(name + "=" + value + " is out of range [" + min + ", " + max + "]");
    }
    return value;
  }

  /** A duration in milliseconds; accepts plain millis or a suffix ms / s / m / h / d. */
  public long durationMs(String name, long defaultMs, long minMs, long maxMs) {
    Optional<String> raw = optional(name);
    if (raw.isEmpty()) {
      return defaultMs;
    }
    String text = raw.get().toLowerCase(java.util.Locale.ROOT);
    long unit = 1;
    String digits = text;
    if (text.endsWith("ms")) {
      digits = text.substring(0, text.length() - 2);
    } else if (text.endsWith("s")) {
      unit = 1_000;
      digits = text.substring(0, text.length() - 1);
    } else if (text.endsWith("m")) {
      unit = 60_000;
      digits = text.substring(0, text.length() - 1);
    } else if (text.endsWith("h")) {
      unit = 3_600_000;
      digits = text.substring(0, text.length() - 1);
    } else if (text.endsWith("d")) {
      unit = 86_400_000;
      digits = text.substring(0, text.length() - 1);
    }
    long value;
    try {
      value = Math.multiplyExact(Long.parseLong(digits.trim()), unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new InvalidConfigException(name + "='" + raw.get() + "' is not a duration (e.g. 1500ms, 15s, 24h, 7d)");
    }
    if (value < minMs || value > maxMs) {
      throw new InvalidConfigException(name + "=" + raw.get() + " is out of range [" + minMs + "ms, " + maxMs + "ms]");
    }
    return value;
  }
}
