package dev.impipe.delay;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.config.Setting;
import dev.impipe.runtime.config.SharedSettings;
import dev.impipe.runtime.topics.TopicNames;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Settings of the delay topology, built from the environment by {@link #fromEnv(Map)} (a pure function).
 *
 * @param tickMs how often the punctuator looks for due records
 * @param maxDelayMs how far ahead a record may be scheduled; further ahead is rejected
 * @param batch most records delivered per punctuation and task (bounds each transaction)
 * @param drainTickMs how soon the next batch follows while a backlog of due records remains
 * @param targets allowed target topics: exact names or prefixes ending in {@code *}; {@code *} allows every
 *     existing topic (internal and Streams-internal topics and the delayed topic itself are never allowed).
 *     Default: the messages topic only ({@code <IM_TOPIC_PREFIX>messages}), the one topic the delay component's
 *     Kafka principal may write scheduled records to (ComponentAcls)
 * @param topicCacheMs how long the list of existing topics is trusted before it is fetched again
 * @param threads Kafka Streams threads of the app
 * @param segmentMs time span of one segment of the schedule and index stores (by due time); a segment is dropped
 *     whole, without a tombstone per record, once the sweep has passed it (so delivered records stay on disk for
 *     at most about two segments)
 * @param sweepTimeMs longest time the punctuations of one stream thread spend delivering before they hand over to
 *     a commit (the other bound is {@code batch} records per thread)
 */
public record DelayConfig(
    long tickMs, long maxDelayMs, int batch, long drainTickMs, List<String> targets, long topicCacheMs, int threads,
    long segmentMs, long sweepTimeMs) {

  public static final String IM_DELAY_TICK = "IM_DELAY_TICK";
  public static final String IM_DELAY_MAX = SharedSettings.IM_DELAY_MAX;
  public static final String IM_DELAY_BATCH = "IM_DELAY_BATCH";
  public static final String IM_DELAY_DRAIN_TICK = "IM_DELAY_DRAIN_TICK";
  public static final String IM_DELAY_TARGETS = "IM_DELAY_TARGETS";
  public static final String IM_DELAY_TOPIC_CACHE = "IM_DELAY_TOPIC_CACHE";
  public static final String IM_DELAY_THREADS = "IM_DELAY_THREADS";
  public static final String IM_DELAY_SEGMENT = "IM_DELAY_SEGMENT";
  public static final String IM_DELAY_SWEEP_TIME = "IM_DELAY_SWEEP_TIME";

  /** The drain tick unless set: 20 ms, at most the tick. */
  public static final long DEFAULT_DRAIN_TICK_MS = 20;
  /**
   * How long the schedule changelog keeps a record beyond the maximum delay: a schedule must still be in the
   * changelog when it falls due, even if the app was down for that long.
   */
  public static final long CHANGELOG_GRACE_MS = Duration.ofDays(30).toMillis();

  public static final Setting<Duration> TICK = Setting.duration(IM_DELAY_TICK, "1s", "10ms", "10m",
      "how often due records are looked for");
  public static final Setting<Integer> BATCH = Setting.integer(IM_DELAY_BATCH, 5_000, 1, 1_000_000,
      "most records delivered per punctuation and partition");
  public static final Setting<Duration> DRAIN_TICK = Setting.duration(IM_DELAY_DRAIN_TICK, "1ms", "10m",
      "gap between batches while a backlog remains (also the app's `poll.ms`); at most `IM_DELAY_TICK`")
      .defaultDoc("`" + DEFAULT_DRAIN_TICK_MS + "ms`");
  public static final Setting<String> TARGETS = Setting.optional(IM_DELAY_TARGETS, "allowed target topics: names "
      + "or `prefix*`, comma-separated (`*`: any existing topic); a record for any other topic goes to `im.rejected` "
      + "with its reason, and the delay component's Kafka principal needs a write ACL for every extra target")
      .validate(t -> t.matches("[A-Za-z0-9._*, -]+"), "a comma-separated list of topic names or prefixes ending in '*'")
      .defaultDoc("`<IM_TOPIC_PREFIX>messages` (`im.messages`)");
  public static final Setting<Duration> TOPIC_CACHE = Setting.duration(IM_DELAY_TOPIC_CACHE, "30s", "1s", "1h",
      "how often the broker's topic list is refreshed (in the background; at most once a second more on a miss)");
  /**
   * Two by default: a burst of due records is drained by the stream threads in parallel, each with its own producer
   * (`bench delay`, 1M due at once: 7.2 s with one thread, 4.1-4.3 s with two, on two cores).
   */
  public static final Setting<Integer> THREADS = Setting.integer(IM_DELAY_THREADS, 2, 1, 64,
      "Kafka Streams threads (a due burst drains on all of them; one per core is a good start)");
  public static final Setting<Duration> SEGMENT = Setting.duration(IM_DELAY_SEGMENT, "1h", "1m", "7d",
      "time span of one segment of the schedule and index stores (by due time), dropped whole once the sweep has "
          + "passed it");
  public static final Setting<Duration> SWEEP_TIME = Setting.duration(IM_DELAY_SWEEP_TIME, "1s", "10ms", "30s",
      "longest time the punctuations of one stream thread spend delivering before a commit (the other bound is "
          + "`IM_DELAY_BATCH` records)");

  public static final ConfigTable TABLE = ConfigTable.of("delay", TICK, SharedSettings.DELAY_MAX, BATCH, DRAIN_TICK,
      TARGETS, TOPIC_CACHE, THREADS, SEGMENT, SWEEP_TIME).alsoReading(ImConfig.TOPIC_PREFIX);

  public DelayConfig {
    targets = List.copyOf(targets);
    if (drainTickMs > tickMs) {
      throw new InvalidConfigException(IM_DELAY_DRAIN_TICK + "=" + drainTickMs + "ms must not exceed "
          + IM_DELAY_TICK + "=" + tickMs + "ms");
    }
  }

  /** The defaults, as with an empty environment. */
  public static DelayConfig defaults() {
    return fromEnv(Map.of());
  }

  /** Reads the settings; throws {@link InvalidConfigException} naming the variable. */
  public static DelayConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    long tick = values.get(TICK).toMillis();
    long max = values.get(SharedSettings.DELAY_MAX).toMillis();
    long drain = values.optional(DRAIN_TICK).map(Duration::toMillis).orElse(Math.min(DEFAULT_DRAIN_TICK_MS, tick));
    // The messages topic under the configured prefix: the one topic the delay principal may write to by default.
    String targetList = values.optional(TARGETS)
        .orElseGet(() -> TopicNames.withPrefix(values.get(ImConfig.TOPIC_PREFIX)).messages());
    List<String> targets = Arrays.stream(targetList.split(",")).map(String::trim).filter(t -> !t.isEmpty())
        .toList();
    for (String target : targets) {
      if (target.indexOf('*') >= 0 && target.indexOf('*') != target.length() - 1) {
        throw new InvalidConfigException(IM_DELAY_TARGETS + "='" + targetList + "' is invalid: '*' may only end "
            + "a prefix, as in im.*");
      }
    }
    return new DelayConfig(tick, max, values.get(BATCH), drain, targets, values.get(TOPIC_CACHE).toMillis(),
        values.get(THREADS), values.get(SEGMENT).toMillis(), values.get(SWEEP_TIME).toMillis());
  }

  /** A copy with another batch size and drain tick (tests). */
  public DelayConfig withBatch(int newBatch, long newDrainTickMs) {
    return new DelayConfig(tickMs, maxDelayMs, newBatch, newDrainTickMs, targets, topicCacheMs, threads, segmentMs,
        sweepTimeMs);
  }

  /** A copy with another segment span (tests). */
  public DelayConfig withSegment(long newSegmentMs) {
    return new DelayConfig(tickMs, maxDelayMs, batch, drainTickMs, targets, topicCacheMs, threads, newSegmentMs,
        sweepTimeMs);
  }

  /** Retention of the schedule and index changelogs: the maximum delay plus {@link #CHANGELOG_GRACE_MS}. */
  public long changelogRetentionMs() {
    return maxDelayMs + CHANGELOG_GRACE_MS;
  }

  /** Streams properties this app adds to the pipeline's defaults. */
  public Map<String, Object> streamsOverrides() {
    // While a backlog drains, the stream thread must come back to punctuate quickly even when no input arrives:
    // an idle poll would otherwise park it for the default 100 ms between batches.
    return Map.of(
        StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads,
        StreamsConfig.POLL_MS_CONFIG, Math.min(100L, drainTickMs));
  }
}
