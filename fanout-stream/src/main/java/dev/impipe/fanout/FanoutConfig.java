package dev.impipe.fanout;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.Setting;
import java.time.Duration;
import java.util.Map;

/**
 * Settings of the fan-out app.
 *
 * @param dedupeWindow a repeated clientMsgId from the same sender within this window is fanned out once
 * @param recallWindow how long a message can be recalled (its sender and recipients are remembered that long)
 * @param largeGroupThreshold groups with at least this many members are read-diffused (0: never)
 * @param dedupeFilterMb heap per fan-out task for the Bloom filters in front of the dedupe store (0: none)
 * @param groupMaxMembers a JOIN that would make a group larger than this is refused ({@code GROUP_FULL})
 * @param maxEntriesPerRound at most this many CONVERSATION_MODE entries per round of a switch to read diffusion
 * @param modeSwitchInterval how often a round of the pending switches runs (wall-clock punctuation)
 */
public record FanoutConfig(Duration dedupeWindow, Duration recallWindow, int largeGroupThreshold,
    int dedupeFilterMb, int groupMaxMembers, int maxEntriesPerRound, Duration modeSwitchInterval) {

  public static final String IM_FANOUT_DEDUPE_WINDOW = "IM_FANOUT_DEDUPE_WINDOW";
  public static final String IM_FANOUT_RECALL_WINDOW = "IM_FANOUT_RECALL_WINDOW";
  public static final String IM_LARGE_GROUP_THRESHOLD = "IM_LARGE_GROUP_THRESHOLD";
  public static final String IM_FANOUT_THREADS = "IM_FANOUT_THREADS";
  public static final String IM_FANOUT_COMMIT_INTERVAL = "IM_FANOUT_COMMIT_INTERVAL";
  public static final String IM_FANOUT_DEDUPE_FILTER_MB = "IM_FANOUT_DEDUPE_FILTER_MB";
  public static final String IM_GROUP_MAX_MEMBERS = "IM_GROUP_MAX_MEMBERS";
  public static final String IM_FANOUT_MAX_ENTRIES_PER_ROUND = "IM_FANOUT_MAX_ENTRIES_PER_ROUND";
  public static final String IM_FANOUT_MODE_SWITCH_INTERVAL = "IM_FANOUT_MODE_SWITCH_INTERVAL";

  public static final Setting<Duration> DEDUPE_WINDOW = Setting.duration(IM_FANOUT_DEDUPE_WINDOW, "24h", "1m", "30d",
      "a repeated clientMsgId from the same sender in the same conversation within this window is delivered once");
  public static final Setting<Duration> RECALL_WINDOW = Setting.duration(IM_FANOUT_RECALL_WINDOW, "7d", "1m", "365d",
      "how long a message can be recalled");
  public static final Setting<Integer> LARGE_GROUP_THRESHOLD = Setting.integer(IM_LARGE_GROUP_THRESHOLD, 1_000, 0,
      10_000_000, "a group with more members than this is large (0: never)");

  /**
   * Two: with one thread, a commit that stalls holds back every task's entries; with two, half of them. Three
   * alternating pairs of bench fanout: p99 172 / 250 / 138 -> 152 / 143 / 131 ms, the same entries/s (ratios 0.58 /
   * 0.57 / 0.52 -> 0.61 / 0.53 / 0.53), at 25% more CPU per message (two producers and two transactions).
   */
  public static final Setting<Integer> THREADS = Setting.integer(IM_FANOUT_THREADS, 2, 1, 64,
      "Kafka Streams threads of the fan-out app (each with its own producer and transaction)");

  /**
   * Entries become visible to devices when the fan-out's transaction commits: the interval is most of the latency
   * from send to inbox (half of it on average), and each commit costs a transaction (markers on every partition).
   * 50 ms, half of Kafka Streams' exactly-once default, lowers the median at no measurable cost in throughput
   * (docs/adr/0003-fanout-commits-every-50-ms.md).
   */
  public static final Setting<Duration> COMMIT_INTERVAL = Setting.duration(IM_FANOUT_COMMIT_INTERVAL, "50ms", "10ms",
      "10s", "how often the fan-out commits its transaction: entries are visible to devices after the commit");

  public static final Setting<Integer> DEDUPE_FILTER_MB = Setting.integer(IM_FANOUT_DEDUPE_FILTER_MB, 8, 0, 4096,
      "heap (MB) per fan-out task for Bloom filters of the dedupe keys, so that a message that is not a retry skips "
          + "the dedupe store's range read (2-4 bytes per message of the last 1.5 dedupe windows: 8 MB hold about "
          + "2-3.5M; once full, lookups read the store as without it; 0: no filter)");

  /** One admin can add members one record at a time: without a cap, a group (and its switch) grows without bound. */
  public static final Setting<Integer> GROUP_MAX_MEMBERS = Setting.integer(IM_GROUP_MAX_MEMBERS, 100_000, 1,
      10_000_000, "most members a group may have: a JOIN beyond it is refused (REJECTED entry to the actor and "
          + "im.rejected, reason code GROUP_FULL)");

  /**
   * A switch to read diffusion tells every member with a CONVERSATION_MODE entry: written in rounds of at most this
   * many, each round in its own transaction, so no transaction's work grows with the group. The default exceeds the
   * default large-group threshold: a group that grows past it one join at a time switches within its message.
   */
  public static final Setting<Integer> MAX_ENTRIES_PER_ROUND = Setting.integer(IM_FANOUT_MAX_ENTRIES_PER_ROUND,
      5_000, 1, 1_000_000, "most CONVERSATION_MODE entries a switch of a group to read diffusion writes per round "
          + "(the message that switches it, then one round per IM_FANOUT_MODE_SWITCH_INTERVAL); progress is kept "
          + "in a state store, so a restart resumes where the last committed round stopped");

  public static final Setting<Duration> MODE_SWITCH_INTERVAL = Setting.duration(IM_FANOUT_MODE_SWITCH_INTERVAL,
      "100ms", "10ms", "10s", "how often a fan-out task writes the next round of a pending switch to read diffusion "
          + "(a member not told yet reads the group's messages since the switch once their entry is written)");

  public static final ConfigTable TABLE = ConfigTable.of("fanout", DEDUPE_WINDOW, RECALL_WINDOW,
      LARGE_GROUP_THRESHOLD, THREADS, COMMIT_INTERVAL, DEDUPE_FILTER_MB, GROUP_MAX_MEMBERS, MAX_ENTRIES_PER_ROUND,
      MODE_SWITCH_INTERVAL);

  public static FanoutConfig defaults() {
    return fromEnv(Map.of());
  }

  public FanoutConfig withLargeGroupThreshold(int threshold) {
    return new FanoutConfig(dedupeWindow, recallWindow, threshold, dedupeFilterMb, groupMaxMembers,
        maxEntriesPerRound, modeSwitchInterval);
  }

  public FanoutConfig withDedupeFilterMb(int mb) {
    return new FanoutConfig(dedupeWindow, recallWindow, largeGroupThreshold, mb, groupMaxMembers,
        maxEntriesPerRound, modeSwitchInterval);
  }

  public FanoutConfig withGroupMaxMembers(int max) {
    return new FanoutConfig(dedupeWindow, recallWindow, largeGroupThreshold, dedupeFilterMb, max,
        maxEntriesPerRound, modeSwitchInterval);
  }

  public FanoutConfig withModeSwitchRounds(int entriesPerRound, Duration interval) {
    return new FanoutConfig(dedupeWindow, recallWindow, largeGroupThreshold, dedupeFilterMb, groupMaxMembers,
        entriesPerRound, interval);
  }

  /** Reads the settings; throws {@code InvalidConfigException} naming the variable. */
  public static FanoutConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    return new FanoutConfig(values.get(DEDUPE_WINDOW), values.get(RECALL_WINDOW), values.get(LARGE_GROUP_THRESHOLD),
        values.get(DEDUPE_FILTER_MB), values.get(GROUP_MAX_MEMBERS), values.get(MAX_ENTRIES_PER_ROUND),
        values.get(MODE_SWITCH_INTERVAL));
  }
}
