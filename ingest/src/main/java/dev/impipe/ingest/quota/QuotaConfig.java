package dev.impipe.ingest.quota;

import dev.impipe.edge.quota.Rate;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.Setting;
import java.time.Duration;
import java.util.List;

/**
 * The per-user quotas of the ingest routes (DESIGN "Abuse and quotas"). Defaults are far above what a person does
 * in a chat app; over a limit the request is answered {@code 429} with {@code Retry-After}.
 *
 * @param sends messages, read markers, recalls and cancels
 * @param schedules messages with {@code deliverAt} (each is also a send)
 * @param membership JOIN / LEAVE requests, any group
 * @param groups JOINs of oneself: the only JOIN that can create a group (each is also a membership request)
 * @param maxTrackedUsers most users whose buckets one quota keeps at a time
 */
public record QuotaConfig(Rate sends, Rate schedules, Rate membership, Rate groups, int maxTrackedUsers) {

  private static final Duration SECOND = Duration.ofSeconds(1);
  private static final Duration MINUTE = Duration.ofMinutes(1);
  private static final Duration DAY = Duration.ofDays(1);
  private static final String PER_INSTANCE = "; per user and ingest instance, `0`: no limit; over it `429` with "
      + "`Retry-After`";

  public static final Setting<Integer> SENDS_PER_SECOND = Setting.integer("IM_QUOTA_SENDS_PER_SECOND", 20, 0,
      1_000_000, "messages, read markers, recalls and cancels one user may send per second" + PER_INSTANCE);
  public static final Setting<Integer> SENDS_BURST = Setting.integer("IM_QUOTA_SENDS_BURST", 40, 1, 1_000_000,
      "how many of those a user may send at once after a pause");
  public static final Setting<Integer> SCHEDULES_PER_DAY = Setting.integer("IM_QUOTA_SCHEDULES_PER_DAY", 200, 0,
      1_000_000, "scheduled messages (`deliverAt`) one user may send per day" + PER_INSTANCE);
  public static final Setting<Integer> SCHEDULES_BURST = Setting.integer("IM_QUOTA_SCHEDULES_BURST", 50, 1,
      1_000_000, "how many of those at once");
  public static final Setting<Integer> MEMBERSHIP_PER_MINUTE = Setting.integer("IM_QUOTA_MEMBERSHIP_PER_MINUTE", 60,
      0, 1_000_000, "group JOIN / LEAVE requests one user may make per minute" + PER_INSTANCE);
  public static final Setting<Integer> MEMBERSHIP_BURST = Setting.integer("IM_QUOTA_MEMBERSHIP_BURST", 100, 1,
      1_000_000, "how many of those at once (an admin adding a group's first members)");
  public static final Setting<Integer> GROUPS_PER_DAY = Setting.integer("IM_QUOTA_GROUPS_PER_DAY", 100, 0,
      1_000_000, "JOINs of oneself (the only JOIN that can create a group) one user may make per day"
          + PER_INSTANCE);
  public static final Setting<Integer> GROUPS_BURST = Setting.integer("IM_QUOTA_GROUPS_BURST", 20, 1, 1_000_000,
      "how many of those at once");
  public static final Setting<Integer> MAX_TRACKED_USERS = Setting.integer("IM_QUOTA_MAX_TRACKED_USERS", 50_000,
      100, 10_000_000, "users whose quota state one instance keeps per quota (idle users are forgotten; beyond this "
          + "the least recently seen is, and starts again with a full allowance)");

  /** The settings, in documentation order. */
  public static final List<Setting<?>> SETTINGS = List.of(SENDS_PER_SECOND, SENDS_BURST, SCHEDULES_PER_DAY,
      SCHEDULES_BURST, MEMBERSHIP_PER_MINUTE, MEMBERSHIP_BURST, GROUPS_PER_DAY, GROUPS_BURST, MAX_TRACKED_USERS);

  /** The quotas from values read by a table holding {@link #SETTINGS}. */
  public static QuotaConfig from(ConfigValues values) {
    return new QuotaConfig(
        Rate.of(values.get(SENDS_PER_SECOND), SECOND, "second", values.get(SENDS_BURST)),
        Rate.of(values.get(SCHEDULES_PER_DAY), DAY, "day", values.get(SCHEDULES_BURST)),
        Rate.of(values.get(MEMBERSHIP_PER_MINUTE), MINUTE, "minute", values.get(MEMBERSHIP_BURST)),
        Rate.of(values.get(GROUPS_PER_DAY), DAY, "day", values.get(GROUPS_BURST)),
        values.get(MAX_TRACKED_USERS));
  }
}
