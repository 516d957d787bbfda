package dev.impipe.inbox;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.Env;
import dev.impipe.runtime.config.Setting;
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
 * @param maxWaitingPerUser most requests of one user that may wait at once (for {@code minSeq}/{@code groupMinSeq},
 *     a rebalance or an owner); one more is answered 429 with {@code Retry-After}
 * @param maxResponseBytes most bytes of entries in one page (inbox, sync, history); a page always carries at least
 *     one entry, {@code hasMore}/{@code next} say the rest
 */
public record InboxStoreConfig(
    long inboxRetentionMs,
    long maxEntriesPerUser,
    long timelineRetentionMs,
    long retentionIntervalMs,
    long queryTimeoutMs,
    long cursorRetentionMs,
    int maxWaitingPerUser,
    long maxResponseBytes) {

  /** Retention that keeps everything. */
  public static final long FOREVER = Long.MAX_VALUE;

  public static final String IM_INBOX_RETENTION = "IM_INBOX_RETENTION";
  public static final String IM_INBOX_MAX_PER_USER = "IM_INBOX_MAX_PER_USER";
  public static final String IM_TIMELINE_RETENTION = "IM_TIMELINE_RETENTION";
  public static final String IM_INBOX_RETENTION_INTERVAL = "IM_INBOX_RETENTION_INTERVAL";
  public static final String IM_INBOX_QUERY_TIMEOUT = "IM_INBOX_QUERY_TIMEOUT";
  public static final String IM_DEVICE_CURSOR_RETENTION = "IM_DEVICE_CURSOR_RETENTION";
  public static final String IM_SYNC_MAX_WAITING_PER_USER = "IM_SYNC_MAX_WAITING_PER_USER";
  public static final String IM_SYNC_MAX_RESPONSE_BYTES = "IM_SYNC_MAX_RESPONSE_BYTES";

  private static final long DAY_MS = Duration.ofDays(1).toMillis();
  private static final long MAX_RETENTION_MS = Duration.ofDays(365 * 100L).toMillis();

  public static final Setting<Long> INBOX_RETENTION = retention(IM_INBOX_RETENTION, 7 * DAY_MS,
      "inbox entries older than this are removed (`forever` keeps all)").defaultDoc("`7d`");
  public static final Setting<Long> MAX_PER_USER = Setting.longValue(IM_INBOX_MAX_PER_USER, 100_000, 0,
      Long.MAX_VALUE, "most stored inbox entries per user, the oldest dropped first (history keeps them; `0`: no cap)");
  public static final Setting<Long> TIMELINE_RETENTION = retention(IM_TIMELINE_RETENTION, FOREVER,
      "the same for conversation history").defaultDoc("`forever`");
  public static final Setting<Duration> RETENTION_INTERVAL = Setting.duration(IM_INBOX_RETENTION_INTERVAL, "1m",
      "10ms", "1d", "how often retention runs");
  public static final Setting<Duration> QUERY_TIMEOUT = Setting.duration(IM_INBOX_QUERY_TIMEOUT, "3s", "0", "1m",
      "how long a request may wait (rebalance, `minSeq`, cursor) before `503`");
  public static final Setting<Long> CURSOR_RETENTION = retention(IM_DEVICE_CURSOR_RETENTION, null,
      "a device cursor (or large-group position) not committed for this long is removed (`forever` keeps all; see "
          + "State that stays bounded)")
      .defaultDoc("the inbox retention");
  /**
   * Above the push gateway's sockets per user ({@code IM_PUSH_MAX_SOCKETS_PER_USER}, default 10): each socket has
   * at most one backlog sync in flight, so a user's own devices never meet the bound while their stores catch up.
   */
  public static final Setting<Integer> MAX_WAITING_PER_USER = Setting.integer(IM_SYNC_MAX_WAITING_PER_USER, 16, 1,
      10_000, "requests of one user waiting at once (`minSeq`, `groupMinSeq`, rebalance) per instance; one more is "
          + "`429` + `Retry-After` (keep it above `IM_PUSH_MAX_SOCKETS_PER_USER`)");
  public static final Setting<Long> MAX_RESPONSE_BYTES = Setting.longValue(IM_SYNC_MAX_RESPONSE_BYTES, 1L << 20,
      1_024, 64L << 20, "bytes of entries in one inbox, sync or history page (at least one entry; `hasMore` and "
          + "`next` say the rest)");

  public static final ConfigTable TABLE = ConfigTable.of("inbox-store", INBOX_RETENTION, MAX_PER_USER,
      TIMELINE_RETENTION, RETENTION_INTERVAL, QUERY_TIMEOUT, CURSOR_RETENTION, MAX_WAITING_PER_USER,
      MAX_RESPONSE_BYTES);

  public InboxStoreConfig {
    if (inboxRetentionMs <= 0 || timelineRetentionMs <= 0 || retentionIntervalMs <= 0 || queryTimeoutMs < 0
        || maxEntriesPerUser < 0 || cursorRetentionMs <= 0 || maxWaitingPerUser <= 0 || maxResponseBytes <= 0) {
      throw new IllegalArgumentException("retentions, interval and bounds must be positive, cap and timeout not "
          + "negative");
    }
  }

  /** The defaults: inbox kept 7 days (as the topic), at most 100,000 entries per user, timelines kept forever. */
  public static InboxStoreConfig defaults() {
    return fromEnv(Map.of());
  }

  /** Parses the settings; an invalid value throws {@code InvalidConfigException} naming the variable. */
  public static InboxStoreConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    long inbox = values.get(INBOX_RETENTION);
    return new InboxStoreConfig(inbox, values.get(MAX_PER_USER), values.get(TIMELINE_RETENTION),
        values.get(RETENTION_INTERVAL).toMillis(), values.get(QUERY_TIMEOUT).toMillis(),
        values.optional(CURSOR_RETENTION).orElse(inbox), values.get(MAX_WAITING_PER_USER),
        values.get(MAX_RESPONSE_BYTES));
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

  /** A retention in milliseconds: a duration, or {@code forever} / {@code -1} for {@link #FOREVER}. */
  private static Setting<Long> retention(String name, Long defaultMs, String doc) {
    return Setting.parsed(name, "duration", defaultMs, raw -> {
      String text = raw.toLowerCase(Locale.ROOT);
      if (text.equals("forever") || text.equals("-1")) {
        return FOREVER;
      }
      return new Env(Map.of(name, raw)).durationMs(name, 0, 1, MAX_RETENTION_MS);
    }, doc);
  }
}
