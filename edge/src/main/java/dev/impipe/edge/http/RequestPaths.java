package dev.impipe.edge.http;

/**
 * The one normal form of a request path, computed once per request: routing, the token check and handlers all see
 * it, so no spelling of a path ({@code //v1/...}) can be routed as one path and authorised as another.
 */
final class RequestPaths {

  private RequestPaths() {}

  /**
   * {@code raw} with every run of {@code /} folded into one and a leading {@code /}; null when the path has a
   * {@code .} or {@code ..} segment (answered 400: no route has one, and a proxy in front might resolve it).
   */
  static String normalise(String raw) {
    if (raw == null || raw.isEmpty()) {
      return "/";
    }
    StringBuilder out = new StringBuilder(raw.length() + 1);
    int i = 0;
    while (i < raw.length()) {
      while (i < raw.length() && raw.charAt(i) == '/') {
        i++;
      }
      if (i == raw.length()) {
        if (out.length() == 0 || raw.endsWith("/")) {
          out.append('/');
        }
        break;
      }
      int end = raw.indexOf('/', i);
      String segment = raw.substring(i, end < 0 ? raw.length() : end);
      if (dotSegment(segment)) {
        return null;
      }
      out.append('/').append(segment);
      i = end < 0 ? raw.length() : end;
    }
    return out.toString();
  }

  /** {@code .} or {@code ..}, also percent-encoded ({@code %2e%2E}), which a router would resolve after decoding. */
  private static boolean dotSegment(String segment) {
    String decoded = segment.replace("%2e", ".").replace("%2E", ".");
    return decoded.equals(".") || decoded.equals("..");
  }

  /** Whether every {@code %} in {@code path} starts a two-digit hex escape (else the path cannot be decoded). */
  static boolean wellEncoded(String path) {
    for (int i = path.indexOf('%'); i >= 0; i = path.indexOf('%', i + 1)) {
      if (i + 2 >= path.length() || Character.digit(path.charAt(i + 1), 16) < 0
          || Character.digit(path.charAt(i + 2), 16) < 0) {
        return false;
      }
    }
    return true;
  }
}
