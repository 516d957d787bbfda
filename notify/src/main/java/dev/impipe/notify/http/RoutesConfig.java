package dev.impipe.notify.http;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.Setting;
import dev.impipe.edge.quota.Rate;
import java.time.Duration;
import java.util.Map;

/**
 * Limits of the registration routes, built from the environment by {@link #fromEnv(Map)} (a pure function).
 *
 * @param changesPerMinute registration changes (PUT, DELETE) per user and minute; each is a record kept forever
 * @param changesBurst how many of them may come at once
 * @param maxTrackedUsers users whose quota is remembered at once (the oldest is forgotten beyond it)
 * @param maxWaitingPerUser reads of one user that may wait for their partition's owner at once
 * @param timeout how long a request may wait for Kafka or for the owner of the user's partition
 */
public record RoutesConfig(int changesPerMinute, int changesBurst, int maxTrackedUsers, int maxWaitingPerUser,
    Duration timeout) {

  public static final Setting<Integer> CHANGES_PER_MINUTE = Setting.integer("IM_NOTIFY_REGISTRATIONS_PER_MINUTE",
      10, 0, 1_000_000, "registration changes (PUT/DELETE .../push) per user and minute, `0` = unlimited; beyond "
          + "it `429` + `Retry-After`");
  public static final Setting<Integer> CHANGES_BURST = Setting.integer("IM_NOTIFY_REGISTRATIONS_BURST", 20, 1,
      1_000_000, "registration changes one user may make at once");
  public static final Setting<Integer> MAX_TRACKED_USERS = Setting.integer("IM_NOTIFY_QUOTA_MAX_TRACKED_USERS",
      100_000, 1, 100_000_000, "users whose registration quota is remembered at once");
  public static final Setting<Integer> MAX_WAITING_PER_USER = Setting.integer("IM_NOTIFY_MAX_WAITING_PER_USER",
      16, 1, 10_000, "registration reads of one user waiting for their partition's owner at once; beyond it `429`");
  public static final Setting<Duration> TIMEOUT = Setting.duration("IM_NOTIFY_ROUTE_TIMEOUT", "10s", "100ms", "5m",
      "how long a registration request waits for Kafka or the partition's owner (then `503` + `Retry-After`)");

  public static final ConfigTable TABLE = ConfigTable.of("notify-routes", CHANGES_PER_MINUTE, CHANGES_BURST,
      MAX_TRACKED_USERS, MAX_WAITING_PER_USER, TIMEOUT);

  public static RoutesConfig fromEnv(Map<String, String> environment) {
    ConfigValues v = TABLE.read(environment);
    return new RoutesConfig(v.get(CHANGES_PER_MINUTE), v.get(CHANGES_BURST), v.get(MAX_TRACKED_USERS),
        v.get(MAX_WAITING_PER_USER), v.get(TIMEOUT));
  }

  /** The per-user rate of registration changes. */
  public Rate changes() {
    return Rate.of(changesPerMinute, Duration.ofMinutes(1), "minute", changesBurst);
  }
}
