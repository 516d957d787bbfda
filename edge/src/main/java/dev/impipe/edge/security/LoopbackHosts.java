package dev.impipe.edge.security;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Whether a host name or address is this machine's loopback, decided from the text alone (no DNS lookup):
 * {@code localhost}, an IPv4 literal in 127.0.0.0/8, or the IPv6 loopback {@code ::1} (bracketed or not, any
 * spelling). A name that only starts with {@code 127.} ({@code 127.evil.com}) is a DNS name, not a loopback.
 */
public final class LoopbackHosts {

  private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
  private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:.]+");

  private LoopbackHosts() {}

  /** True for {@code localhost}, 127.0.0.0/8 literals and {@code ::1}; false for every other name or address. */
  public static boolean isLoopback(String host) {
    if (host == null) {
      return false;
    }
    String h = host.trim().toLowerCase(Locale.ROOT);
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    if (h.equals("localhost")) {
      return true;
    }
    var v4 = IPV4.matcher(h);
    if (v4.matches()) {
      for (int i = 1; i <= 4; i++) {
        if (Integer.parseInt(v4.group(i)) > 255) {
          return false;
        }
      }
      return Integer.parseInt(v4.group(1)) == 127;
    }
    if (h.indexOf(':') >= 0 && IPV6.matcher(h).matches()) {
      try {
        // A literal with ':' is parsed, never resolved.
        return InetAddress.getByName(h).isLoopbackAddress();
      } catch (UnknownHostException e) {
        return false;
      }
    }
    return false;
  }

  /**
   * The host of an HTTP {@code Host} header value ({@code name}, {@code name:port}, {@code [v6]}, {@code [v6]:port});
   * null when it is malformed.
   */
  public static String hostOfHeader(String value) {
    if (value == null) {
      return null;
    }
    String v = value.trim();
    if (v.startsWith("[")) {
      int end = v.indexOf(']');
      if (end < 0 || end + 1 < v.length() && !validPort(v.substring(end + 1))) {
        return null;
      }
      return v.substring(0, end + 1);
    }
    int colon = v.indexOf(':');
    if (colon < 0) {
      return v.isEmpty() ? null : v;
    }
    if (v.indexOf(':', colon + 1) >= 0 || !validPort(v.substring(colon))) {
      return null;
    }
    return colon == 0 ? null : v.substring(0, colon);
  }

  private static boolean validPort(String colonAndPort) {
    return colonAndPort.matches(":\\d{1,5}");
  }
}
