package dev.impipe.inbox.conversations;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.Setting;
import java.time.Duration;
import java.util.Map;

/**
 * Settings of the conversation list, parsed from the environment by {@link #fromEnv(Map)} (a pure function).
 *
 * @param unreadTracked unread messages indexed per user and conversation, in its state (so a recall or a read
 *     marker can take them off the count); older unread ones stay counted without an index entry
 * @param defaultLimit conversations per page when the request names no {@code limit}
 * @param maxLimit most conversations per page ({@code limit} above it: 400)
 * @param largeUnreadMax a large group's unread messages are counted from its timeline up to this many
 * @param enabled false: the list's materialiser is not in the topology and its routes answer 404
 * @param orderCacheUsers users whose list order is kept in memory per inbox-store task (0: none, every page reads
 *     all the user's states)
 * @param checkpointIntervalMs how often the list's changed states are written to its stores (0: at every commit);
 *     after a restart the entries since are read again ({@link ListCheckpoints})
 * @param checkpointMaxPending changed states per task that make a write-back at the next commit before the interval
 */
public record ConversationsConfig(int unreadTracked, int defaultLimit, int maxLimit, int largeUnreadMax,
    boolean enabled, int orderCacheUsers, long checkpointIntervalMs, int checkpointMaxPending) {

  public static final Setting<Boolean> ENABLED = Setting.bool("IM_CONVERSATIONS_ENABLED", true, "keep the "
      + "conversation list; `false`: its materialiser is not in the inbox store's topology (no state, no work per "
      + "inbox entry) and `GET /v1/users/{userId}/conversations` and the settings route answer `404`");

  public static final Setting<Integer> UNREAD_TRACKED = Setting.integer("IM_CONVERSATION_UNREAD_TRACKED", 100, 1,
      10_000, "unread messages indexed per user and conversation (inside its state, about 5 bytes each, rewritten "
          + "with every entry of the conversation); older unread ones are still counted, but a recall of one no "
          + "longer lowers the count and the conversation says `unreadCapped`");
  public static final Setting<Integer> PAGE_DEFAULT = Setting.integer("IM_CONVERSATIONS_PAGE_DEFAULT", 50, 1,
      10_000, "conversations per page of `GET /v1/users/{userId}/conversations` without `limit`");
  public static final Setting<Integer> PAGE_MAX = Setting.integer("IM_CONVERSATIONS_PAGE_MAX", 500, 1, 10_000,
      "most conversations per page (a larger `limit` is a `400`)");

  public static final Setting<Integer> LARGE_UNREAD_MAX = Setting.integer("IM_CONVERSATION_LARGE_UNREAD_MAX", 100,
      1, 100_000, "a large group's unread messages are counted from its timeline up to this many (each list "
          + "request reads at most this many entries per large group of the user)");

  public static final Setting<Integer> ORDER_CACHE_USERS = Setting.integer("IM_CONVERSATION_ORDER_CACHE_USERS",
      10_000, 0, 10_000_000, "users whose conversation list order is kept in memory per inbox-store task (those "
          + "whose list was requested there most recently; about 200 bytes per conversation of theirs, no changelog): "
          + "a page then reads its own conversations, not all the user's; `0`: every page reads all the user's "
          + "conversations and sorts them");

  public static final Setting<Duration> CHECKPOINT_INTERVAL = Setting.duration(
      "IM_CONVERSATION_CHECKPOINT_INTERVAL", "30s", "0", "10m", "how often each changed state of the list is written "
          + "to its stores and changelog (once per interval, not once per message; a 32nd of the users at a time, in "
          + "turn); after a crash or a move the inbox entries since are read again (`0`: at every commit of the inbox "
          + "store)");
  public static final Setting<Integer> CHECKPOINT_MAX_PENDING = Setting.integer(
      "IM_CONVERSATION_CHECKPOINT_MAX_PENDING", 20_000, 1, 10_000_000, "changed states per inbox-store task kept in "
          + "memory (a few hundred bytes each): when this many wait, all are written at the next commit, before their "
          + "turn");

  public static final ConfigTable TABLE =
      ConfigTable.of("conversations", ENABLED, UNREAD_TRACKED, PAGE_DEFAULT, PAGE_MAX,
          LARGE_UNREAD_MAX, ORDER_CACHE_USERS, CHECKPOINT_INTERVAL, CHECKPOINT_MAX_PENDING);

  public ConversationsConfig {
    if (unreadTracked < 1 || defaultLimit < 1 || maxLimit < defaultLimit || largeUnreadMax < 1
        || orderCacheUsers < 0 || checkpointIntervalMs < 0 || checkpointMaxPending < 1) {
      throw new IllegalArgumentException("tracked and page sizes must be positive, the maximum at least the default, "
          + "the order cache not negative");
    }
  }

  public static ConversationsConfig defaults() {
    return fromEnv(Map.of());
  }

  /** Parses the settings; an invalid value throws {@code InvalidConfigException} naming the variable. */
  public static ConversationsConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    int max = values.get(PAGE_MAX);
    return new ConversationsConfig(values.get(UNREAD_TRACKED), Math.min(values.get(PAGE_DEFAULT), max), max,
        values.get(LARGE_UNREAD_MAX), values.get(ENABLED), values.get(ORDER_CACHE_USERS),
        values.get(CHECKPOINT_INTERVAL).toMillis(), values.get(CHECKPOINT_MAX_PENDING));
  }
}
