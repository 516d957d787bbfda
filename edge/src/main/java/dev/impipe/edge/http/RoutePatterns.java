package dev.impipe.edge.http;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Route patterns as modules write them ({@code /v1/users/{userId}/inbox}) and as the router reads them. */
final class RoutePatterns {

  private static final Pattern VARIABLE = Pattern.compile("\\{([A-Za-z][A-Za-z0-9_]*)}");

  private RoutePatterns() {}

  /** The pattern with one leading {@code /} (modules may write {@code v1/...}). */
  static String canonical(String pattern) {
    return "/" + pattern.replaceAll("^/+", "");
  }

  /** The router's spelling: {@code {name}} becomes {@code :name}. */
  static String forRouter(String pattern) {
    String canonical = canonical(pattern);
    Matcher m = VARIABLE.matcher(canonical);
    String out = m.replaceAll(":$1");
    if (out.indexOf('{') >= 0 || out.indexOf('}') >= 0) {
      throw new IllegalArgumentException("route pattern " + pattern + ": a variable is {letters, digits, _}");
    }
    return out;
  }
}
