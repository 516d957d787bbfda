package dev.impipe.runtime.config;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;

/** The values a {@link ConfigTable} read from the environment; typed configs are built from these. */
public final class ConfigValues {

  private final String table;
  private final Map<Setting<?>, Object> values;

  ConfigValues(String table, Map<Setting<?>, Object> values) {
    this.table = table;
    this.values = Collections.unmodifiableMap(values);
  }

  /** The value of {@code setting} (its default when unset); fails for a setting without a default that is unset. */
  public <T> T get(Setting<T> setting) {
    return optional(setting).orElseThrow(() -> new InvalidConfigException(setting.name() + " is not set"));
  }

  /** The value of {@code setting}; empty when unset and without a default. */
  @SuppressWarnings("unchecked")
  public <T> Optional<T> optional(Setting<T> setting) {
    if (!values.containsKey(setting)) {
      throw new IllegalArgumentException(setting.name() + " is not in config table " + table);
    }
    return Optional.ofNullable((T) values.get(setting));
  }

  /** One line for the start-up log: {@code push-gateway: IM_PUSH_QUEUE=1000, ...}, secrets as {@code ****}. */
  public String describe() {
    StringJoiner line = new StringJoiner(", ", table + ": ", "");
    values.forEach((setting, value) -> line.add(setting.name() + "=" + setting.show(value)));
    return line.toString();
  }

  @Override
  public String toString() {
    return describe();
  }
}
