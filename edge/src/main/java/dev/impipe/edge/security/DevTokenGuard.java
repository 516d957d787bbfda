package dev.impipe.edge.security;

import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.config.Setting;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Keeps the dev-token endpoint (anyone may become anyone) on the developer's machine. At start: dev tokens on a
 * non-loopback {@code IM_HTTP_HOST} are refused unless {@code IM_AUTH_DEV_TOKENS_ANY_INTERFACE=true}. Per request
 * (DNS rebinding: a web page whose name now resolves to 127.0.0.1 posting to the local instance): the {@code Host}
 * and, when a browser sends one, the {@code Origin} must name a loopback host or one listed in
 * {@code IM_AUTH_DEV_TOKENS_HOSTS}; otherwise 403.
 */
public final class DevTokenGuard {

  public static final String IM_AUTH_DEV_TOKENS_HOSTS = "IM_AUTH_DEV_TOKENS_HOSTS";
  public static final String IM_AUTH_DEV_TOKENS_ANY_INTERFACE = "IM_AUTH_DEV_TOKENS_ANY_INTERFACE";

  public static final Setting<String> HOSTS = Setting.optional(IM_AUTH_DEV_TOKENS_HOSTS,
      "host names (comma-separated) the dev-token endpoint answers besides `localhost`, 127.0.0.0/8 and `::1`: "
          + "its `Host` and `Origin` are checked (`403` otherwise, against DNS rebinding)")
      .defaultDoc("(loopback only)");
  public static final Setting<Boolean> ANY_INTERFACE = Setting.bool(IM_AUTH_DEV_TOKENS_ANY_INTERFACE, false,
      "allows dev tokens with a non-loopback `IM_HTTP_HOST` (anyone who reaches the port may become anyone); "
          + "without it such a start is refused");

  private final Set<String> extraHosts;

  DevTokenGuard(Set<String> extraHosts) {
    this.extraHosts = extraHosts.stream().map(h -> h.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
  }

  /**
   * The guard for a process serving dev tokens on {@code bindHost}; throws {@link InvalidConfigException} when
   * that host is not a loopback one and {@code IM_AUTH_DEV_TOKENS_ANY_INTERFACE} is not set.
   */
  public static DevTokenGuard forBind(ConfigValues values, String bindHost) {
    if (!LoopbackHosts.isLoopback(bindHost) && !values.get(ANY_INTERFACE)) {
      throw new InvalidConfigException("IM_AUTH_DEV_TOKENS=true lets anyone become anyone, and IM_HTTP_HOST="
          + bindHost + " serves it beyond this machine: bind to 127.0.0.1, turn dev tokens off, or set "
          + IM_AUTH_DEV_TOKENS_ANY_INTERFACE + "=true if you really mean it");
    }
    String hosts = values.optional(HOSTS).orElse("");
    return new DevTokenGuard(Arrays.stream(hosts.split(",")).map(String::trim).filter(h -> !h.isEmpty())
        .collect(Collectors.toSet()));
  }

  /** Throws a 403 unless the request's {@code Host} (and {@code Origin}, if any) is one this endpoint serves. */
  public void check(Request request) {
    String host = LoopbackHosts.hostOfHeader(request.headers().get("host"));
    if (!allowed(host)) {
      throw HttpError.forbidden("the dev-token endpoint answers only requests to localhost (Host)");
    }
    String origin = request.headers().get("origin");
    if (origin != null && !allowed(originHost(origin))) {
      throw HttpError.forbidden("the dev-token endpoint answers only pages served from localhost (Origin)");
    }
  }

  private boolean allowed(String host) {
    return host != null && (LoopbackHosts.isLoopback(host) || extraHosts.contains(host.toLowerCase(Locale.ROOT)));
  }

  private static String originHost(String origin) {
    try {
      URI uri = new URI(origin.trim());
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      return scheme.equals("http") || scheme.equals("https") ? uri.getHost() : null;
    } catch (URISyntaxException e) {
      return null;
    }
  }
}
