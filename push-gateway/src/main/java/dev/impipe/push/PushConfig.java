package dev.impipe.push;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.InvalidConfigException;
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
 * @param writeBudget most bytes of frames one socket holds written and not yet flushed to the network: backlog
 *     pages, live pushes and replies all draw from it (a device not reading); beyond: resync
 * @param ping how often the gateway pings each device; one that has not answered two pings is closed
 * @param page entries per backlog read (fewer when the write budget has less room)
 * @param limits what one connection may send: frame size, frame rate, sends in flight
 * @param maxSocketsPerUser most sockets one user holds on one instance; a new one closes the oldest
 * @param connectsPerMinute sockets one user may open per minute on one instance (bursts of 10, or
 *     {@code maxSocketsPerUser} if larger); beyond: 429 before the upgrade
 * @param read which inbox partitions the reader reads: all of them, or those whose inbox-store tasks are active on
 *     this instance (devices of other users are sent to their owner)
 */
public record PushConfig(Optional<String> apiUrl, int queue, int writeBudget, Duration ping, int page,
    FrameLimiter.Limits limits, int maxSocketsPerUser, int connectsPerMinute, ReadMode read) {

  /** What the gateway's reader reads of {@code im.inbox} and {@code im.ack-timeouts}. */
  public enum ReadMode {
    /** Every partition: any instance serves any device; N instances read the inbox N times. */
    ALL,
    /** The partitions of this instance's active inbox-store tasks: devices are redirected to their owner. */
    OWNED;

    static ReadMode parse(String raw) {
      return switch (raw.toLowerCase(java.util.Locale.ROOT)) {
        case "all" -> ALL;
        case "owned" -> OWNED;
        default -> throw new InvalidConfigException(IM_PUSH_READ + "='" + raw + "' is invalid: expected all or owned");
      };
    }

    @Override
    public String toString() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  public static final String IM_PUSH_API_URL = "IM_PUSH_API_URL";
  public static final String IM_PUSH_QUEUE = "IM_PUSH_QUEUE";
  public static final String IM_PUSH_SOCKET_WRITE_BUDGET = "IM_PUSH_SOCKET_WRITE_BUDGET";
  public static final String IM_PUSH_PING = "IM_PUSH_PING";
  public static final String IM_PUSH_PAGE = "IM_PUSH_PAGE";
  public static final String IM_PUSH_MAX_FRAME_BYTES = "IM_PUSH_MAX_FRAME_BYTES";
  public static final String IM_PUSH_FRAME_RATE = "IM_PUSH_FRAME_RATE";
  public static final String IM_PUSH_MAX_INFLIGHT_SENDS = "IM_PUSH_MAX_INFLIGHT_SENDS";
  public static final String IM_PUSH_MAX_SOCKETS_PER_USER = "IM_PUSH_MAX_SOCKETS_PER_USER";
  public static final String IM_PUSH_CONNECTS_PER_MINUTE = "IM_PUSH_CONNECTS_PER_MINUTE";
  public static final String IM_PUSH_READ = "IM_PUSH_READ";

  public static final Setting<String> API_URL = Setting.optional(IM_PUSH_API_URL, "HTTP API the gateway reads "
      + "backlogs from and sends through (a gateway-only instance points it at the API tier)")
      .defaultDoc("this instance");
  public static final Setting<Integer> QUEUE = Setting.integer(IM_PUSH_QUEUE, 1_000, 1, 1_000_000,
      "entries per connection: unACKed pushes, and live entries waiting behind the backlog");
  public static final Setting<Integer> WRITE_BUDGET = Setting.integer(IM_PUSH_SOCKET_WRITE_BUDGET, 1024 * 1024,
      16 * 1024, 64 * 1024 * 1024, "bytes of frames one socket holds unflushed (backlog pages, live pushes and "
          + "replies alike); a device that leaves it full is told to resync (close 4008)");
  public static final Setting<Duration> PING = Setting.duration(IM_PUSH_PING, "20s", "100ms", "10m", "ping interval");
  public static final Setting<Integer> PAGE = Setting.integer(IM_PUSH_PAGE, 200, 1, 1_000,
      "entries per backlog read (at most `IM_PUSH_QUEUE`; fewer when the write budget has less room)");
  public static final Setting<Integer> MAX_FRAME_BYTES = Setting.integer(IM_PUSH_MAX_FRAME_BYTES, 64 * 1024, 1_024,
      256 * 1024, "largest frame a device may send; a larger one closes the socket (close 4009)");
  public static final Setting<Integer> FRAME_RATE = Setting.integer(IM_PUSH_FRAME_RATE, 1_000, 1, 1_000_000,
      "frames per second one socket may send (bursts of two seconds' worth); faster closes it (close 4029)");
  public static final Setting<Integer> MAX_INFLIGHT_SENDS = Setting.integer(IM_PUSH_MAX_INFLIGHT_SENDS, 16, 1,
      10_000, "`send` frames of one socket not yet answered; one more is answered with an `error` frame, status 429");
  public static final Setting<Integer> MAX_SOCKETS_PER_USER = Setting.integer(IM_PUSH_MAX_SOCKETS_PER_USER, 10, 1,
      10_000, "sockets one user holds on one instance; one more closes that user's oldest (close 4012)");
  public static final Setting<Integer> CONNECTS_PER_MINUTE = Setting.integer(IM_PUSH_CONNECTS_PER_MINUTE, 30, 1,
      1_000_000, "sockets one user may open per minute on one instance, in bursts of 10 (or "
          + "`IM_PUSH_MAX_SOCKETS_PER_USER` if larger; each open costs a backlog read); one more is `429` + "
          + "`Retry-After` before the upgrade");

  public static final Setting<ReadMode> READ = Setting.parsed(IM_PUSH_READ, "all|owned", ReadMode.ALL,
      ReadMode::parse, "`all`: every instance reads every partition of the inbox and any instance serves any device; "
          + "`owned`: an instance reads only the partitions of its active inbox-store tasks and sends other devices "
          + "to their owner (a `redirect` frame, close 4013); needs the inbox store in the same process, else `all` "
          + "(see docs/operations/scaling-out.md)");

  public static final ConfigTable TABLE = ConfigTable.of("push-gateway", API_URL, QUEUE, WRITE_BUDGET, PING,
      PAGE, MAX_FRAME_BYTES, FRAME_RATE, MAX_INFLIGHT_SENDS, MAX_SOCKETS_PER_USER, CONNECTS_PER_MINUTE, READ);

  /** This config with read mode {@code read}. */
  PushConfig withRead(ReadMode read) {
    return new PushConfig(apiUrl, queue, writeBudget, ping, page, limits, maxSocketsPerUser, connectsPerMinute, read);
  }

  /** Reads the IM_PUSH_* variables; throws {@code InvalidConfigException} naming the variable. */
  public static PushConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    Optional<String> api = values.optional(API_URL).map(u -> u.replaceAll("/+$", ""));
    int queue = values.get(QUEUE);
    FrameLimiter.Limits limits = new FrameLimiter.Limits(values.get(MAX_FRAME_BYTES), values.get(FRAME_RATE),
        values.get(MAX_INFLIGHT_SENDS));
    return new PushConfig(api, queue, values.get(WRITE_BUDGET), values.get(PING),
        Math.min(values.get(PAGE), queue), limits, values.get(MAX_SOCKETS_PER_USER), values.get(CONNECTS_PER_MINUTE),
        values.get(READ));
  }
}
