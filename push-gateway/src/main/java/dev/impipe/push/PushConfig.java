package dev.impipe.push;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.Setting;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Settings of the push gateway, built from the environment by {@link #fromEnv(Map)}, a pure function.
 *
 * @param apiUrl base URL of the HTTP API the gateway reads backlogs from and sends through (empty: this instance)
 * @param queue most entries one connection holds: pushed and not yet ACKed, plus live entries waiting while the
 *     backlog is sent; beyond it the device is told to resync
 * @param writeQueueBytes most bytes waiting in one socket's write queue (a device not reading); beyond: resync
 * @param ping how often the gateway pings each device; one that has not answered two pings is closed
 * @param page entries per backlog read
 */
public record PushConfig(Optional<String> apiUrl, int queue, int writeQueueBytes, Duration ping, int page) {

  public static final String IM_PUSH_API_URL = "IM_PUSH_API_URL";
  public static final String IM_PUSH_QUEUE = "IM_PUSH_QUEUE";
  public static final String IM_PUSH_WRITE_QUEUE_BYTES = "IM_PUSH_WRITE_QUEUE_BYTES";
  public static final String IM_PUSH_PING = "IM_PUSH_PING";
  public static final String IM_PUSH_PAGE = "IM_PUSH_PAGE";

  public static final Setting<String> API_URL = Setting.optional(IM_PUSH_API_URL, "HTTP API the gateway reads "
      + "backlogs from and sends through (a gateway-only instance points it at the API tier)")
      .defaultDoc("this instance");
  public static final Setting<Integer> QUEUE = Setting.integer(IM_PUSH_QUEUE, 1_000, 1, 1_000_000,
      "entries per connection: unACKed pushes, and live entries waiting behind the backlog");
  public static final Setting<Integer> WRITE_QUEUE_BYTES = Setting.integer(IM_PUSH_WRITE_QUEUE_BYTES, 256 * 1024,
      1_024, 64 * 1024 * 1024, "bytes waiting in one socket's write queue");
  public static final Setting<Duration> PING = Setting.duration(IM_PUSH_PING, "20s", "100ms", "10m", "ping interval");
  public static final Setting<Integer> PAGE = Setting.integer(IM_PUSH_PAGE, 200, 1, 1_000,
      "entries per backlog read (at most `IM_PUSH_QUEUE`)");

  public static final ConfigTable TABLE = ConfigTable.of("push-gateway", API_URL, QUEUE, WRITE_QUEUE_BYTES, PING,
      PAGE);

  /** Reads the IM_PUSH_* variables; throws {@code InvalidConfigException} naming the variable. */
  public static PushConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    Optional<String> api = values.optional(API_URL).map(u -> u.replaceAll("/+$", ""));
    int queue = values.get(QUEUE);
    return new PushConfig(api, queue, values.get(WRITE_QUEUE_BYTES), values.get(PING),
        Math.min(values.get(PAGE), queue));
  }
}
