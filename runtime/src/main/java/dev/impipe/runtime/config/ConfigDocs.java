package dev.impipe.runtime.config;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Renders the README's configuration tables from {@link ConfigTable}s. A block is delimited by marker comments:
 * <pre>{@code
 * <!-- config:pipeline http:IM_HTTP_HOST runtime -->
 * ...generated table...
 * <!-- /config -->
 * }</pre>
 * Each item of the opening marker is a table name ({@code pipeline}: its settings no other block names) or a table
 * and the settings to take from it ({@code http:IM_HTTP_HOST,IM_HTTP_PORT}). Every setting of every table must
 * appear in exactly one block, so a new setting cannot be left undocumented.
 */
public final class ConfigDocs {

  private static final Pattern BLOCK =
      Pattern.compile("(<!-- config:([^>]*?) -->\n)(.*?)(<!-- /config -->)", Pattern.DOTALL);

  private ConfigDocs() {
  }

  /** {@code readme} with every block's table rendered from {@code tables}. */
  public static String render(String readme, List<ConfigTable> tables) {
    Map<String, ConfigTable> byName = new LinkedHashMap<>();
    for (ConfigTable t : tables) {
      if (byName.put(t.name(), t) != null) {
        throw new IllegalArgumentException("two config tables named " + t.name());
      }
    }
    List<List<String[]>> blocks = new ArrayList<>();
    Set<String> named = new HashSet<>();
    Matcher m = BLOCK.matcher(readme);
    while (m.find()) {
      List<String[]> items = new ArrayList<>();
      for (String item : m.group(2).trim().split("\\s+")) {
        String[] parts = item.split(":", 2);
        if (!byName.containsKey(parts[0])) {
          throw new IllegalArgumentException("README marker names an unknown config table: " + item
              + " (known: " + byName.keySet() + ")");
        }
        items.add(parts);
        if (parts.length == 2) {
          for (String var : parts[1].split(",")) {
            if (byName.get(parts[0]).settings().stream().noneMatch(s -> s.name().equals(var))) {
              throw new IllegalArgumentException("README marker names " + var + ", not in config table " + parts[0]);
            }
            named.add(var);
          }
        }
      }
      blocks.add(items);
    }
    Set<String> rendered = new HashSet<>();
    StringBuilder out = new StringBuilder();
    m.reset();
    int i = 0;
    while (m.find()) {
      StringBuilder table = new StringBuilder("| variable | default | meaning |\n|---|---|---|\n");
      for (String[] item : blocks.get(i++)) {
        Set<String> only = item.length == 2 ? new LinkedHashSet<>(List.of(item[1].split(","))) : null;
        for (Setting<?> s : byName.get(item[0]).settings()) {
          boolean take = only != null ? only.contains(s.name()) : !named.contains(s.name());
          if (take) {
            if (!rendered.add(s.name())) {
              throw new IllegalArgumentException(s.name() + " is rendered by two README blocks");
            }
            table.append(ConfigTable.row(s));
          }
        }
      }
      m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + table + m.group(4)));
    }
    m.appendTail(out);
    for (ConfigTable t : tables) {
      for (Setting<?> s : t.settings()) {
        if (!rendered.contains(s.name())) {
          throw new IllegalArgumentException(s.name() + " (config table " + t.name() + ") is in no README block: add "
              + "its table to a <!-- config:... --> marker");
        }
      }
    }
    return out.toString();
  }
}
