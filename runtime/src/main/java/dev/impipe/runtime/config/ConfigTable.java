package dev.impipe.runtime.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The settings of one component, each declared once as a {@link Setting}: the component's typed config is built from
 * {@link #read(Map)}, the README's tables are rendered from it ({@link ConfigDocs}), and
 * {@link ConfigValues#describe()} is the start-up log line.
 *
 * @param name the component (or part) the table belongs to, as in the README markers {@code <!-- config:NAME -->}
 * @param settings the settings this table declares and documents, in README order
 * @param shared settings declared by another table that this component reads too (logged here, documented there)
 */
public record ConfigTable(String name, List<Setting<?>> settings, List<Setting<?>> shared) {

  public ConfigTable {
    settings = List.copyOf(settings);
    shared = List.copyOf(shared);
    Map<String, Setting<?>> seen = new LinkedHashMap<>();
    for (Setting<?> s : all(settings, shared)) {
      if (seen.put(s.name(), s) != null) {
        throw new IllegalArgumentException(s.name() + " is declared twice in config table " + name);
      }
    }
  }

  /** A table of {@code settings}. */
  public static ConfigTable of(String name, Setting<?>... settings) {
    return new ConfigTable(name, List.of(settings), List.of());
  }

  /** This table, also reading settings another table declares. */
  public ConfigTable alsoReading(Setting<?>... others) {
    List<Setting<?>> more = new ArrayList<>(shared);
    more.addAll(List.of(others));
    return new ConfigTable(name, settings, more);
  }

  /** Reads every setting; throws {@link InvalidConfigException} naming the first bad variable and its value. */
  public ConfigValues read(Map<String, String> environment) {
    Env env = new Env(environment);
    Map<Setting<?>, Object> values = new LinkedHashMap<>();
    for (Setting<?> s : all(settings, shared)) {
      if (s.isReadByJava()) {
        values.put(s, s.read(env));
      }
    }
    return new ConfigValues(name, values);
  }

  /** One README row: {@code | `NAME` | default | doc |}. */
  static String row(Setting<?> s) {
    String name = s.name().endsWith("*") ? "`" + s.name() + "` (others)" : "`" + s.name() + "`";
    String dflt = s.defaultText().isEmpty() ? "" : s.defaultText() + " ";
    return "| " + name + " | " + dflt + "| " + s.doc() + " |\n";
  }

  private static List<Setting<?>> all(List<Setting<?>> a, List<Setting<?>> b) {
    List<Setting<?>> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }
}
