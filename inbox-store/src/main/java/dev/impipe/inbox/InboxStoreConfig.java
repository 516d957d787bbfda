package dev.impipe.inbox;

import dev.impipe.runtime.config.Env;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * Settings of the inbox store, parsed from the environment by {@link #fromEnv(Map)} (a pure function).
 *
 * @param inboxRetentionMs inbox entries whose record timestamp is older than this are removed from the store
 *     ({@link #FOREVER} keeps them)
 * @param maxEntriesPerUser cap on stored inbox entries per user, oldest removed first; 0 = no cap
 * @param timelineRetentionMs as {@code inboxRetentionMs}, for the conversation timelines (history)
 * @param retentionIntervalMs how often the retention punctuator runs (wall-clock time)
 * @param queryTimeoutMs how long a request may wait for the owner of its key (rebalance) or for {@code minSeq};
 *     after that it is answered 503 with {@code Retry-After}
 * @param cursorRetentionMs a device cursor (or large-group position) not committed for this long is removed
 *     ({@link #FOREVER} keeps them); default the inbox retention
 */
public record InboxStoreConfig(
    long inboxRetentionMs,
    long maxEntriesPerUser,
    long timelineRetentionMs,
    long retentionIntervalMs,
    long queryTimeoutMs,
    long cursorRetentionMs) {

  /** Retention that keeps everything. */
  public static final long FOREVER = Long.MAX_VALUE;

  public static final String IM_INBOX_RETENTION = "IM_INBOX_RETENTION";
  public static final String IM_INBOX_MAX_PER_USER = "IM_INBOX_MAX_PER_USER";
  public static final String IM_TIMELINE_RETENTION = "IM_TIMELINE_RETENTION";
  public static final String IM_INBOX_RETENTION_INTERVAL = "IM_INBOX_RETENTION_INTERVAL";
  public static final String IM_INBOX_QUERY_TIMEOUT = "IM_INBOX_QUERY_TIMEOUT";
  public static final String IM_DEVICE_CURSOR_RETENTION = "IM_DEVICE_CURSOR_RETENTION";

  private static final long DAY_MS = Duration.ofDays(1).toMillis();
  private static final long MAX_RETENTION_MS = Duration.ofDays(365 * 100L).toMillis();

  public InboxStoreConfig {
    if (inboxRetentionMs <= 0 || timelineRetentionMs <= 0 || retentionIntervalMs <= 0 || queryTimeoutMs < 0
        || maxEntriesPerUser < 0 || cursorRetentionMs <= 0) {
      throw new IllegalArgumentException("retentions and interval must be positive, cap and timeout not negative");
    }
  }

  /** The defaults: inbox kept 7 days (as the topic), no cap, timelines kept forever. */
  public static InboxStoreConfig defaults() {
    return fromEnv(Map.of());
  }

  /** Parses the settings; an invalid value throws {@code InvalidConfigException} naming the variable. */
  public static InboxStoreConfig fromEnv(Map<String, String> environment) {
    Env env = new Env(environment);
    long inbox = retention(env, IM_INBOX_RETENTION, 7 * DAY_MS);
    long cap = env.longValue(IM_INBOX_MAX_PER_USER, 0, 0, Long.MAX_VALUE);
    long timeline = retention(env, IM_TIMELINE_RETENTION, FOREVER);
    long interval = env.durationMs(IM_INBOX_RETENTION_INTERVAL, 60_000, 10, DAY_MS);
    long timeout = env.durationMs(IM_INBOX_QUERY_TIMEOUT, 3_000, 0, 60_000);
    long cursors = retention(env, IM_DEVICE_CURSOR_RETENTION, inbox);
    return new InboxStoreConfig(inbox, cap, timeline, interval, timeout, cursors);
  }

  /** True when inbox entries expire. */
  public boolean inboxExpires() {
    return inboxRetentionMs != FOREVER;
  }

  /** True when device cursors not committed for a while are removed. */
  public boolean cursorsExpire() {
    return cursorRetentionMs != FOREVER;
  }

  /** True when conversation timeline entries expire. */
  public boolean timelineExpires() {
    return timelineRetentionMs != FOREVER;
  }

  private static long retention(Env env, String name, long defaultMs) {
    String raw = env.optional(name).orElse("").toLowerCase(Locale.ROOT);
    if (raw.equals("forever") || raw.equals("-1")) {
      return FOREVER;
    }
    return env.durationMs(name, defaultMs, 1, MAX_RETENTION_MS);
  }
}
