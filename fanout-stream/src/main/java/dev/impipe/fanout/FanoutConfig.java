package dev.impipe.fanout;

import dev.impipe.runtime.config.Env;
import java.time.Duration;
import java.util.Map;

/**
 * Settings of the fan-out app.
 *
 * @param dedupeWindow a repeated clientMsgId from the same sender within this window is fanned out once
 * @param recallWindow how long a message can be recalled (its sender and recipients are remembered that long)
 * @param largeGroupThreshold groups with at least this many members are read-diffused (0: never)
 */
public record FanoutConfig(Duration dedupeWindow, Duration recallWindow, int largeGroupThreshold) {

  public static final String IM_FANOUT_DEDUPE_WINDOW = "IM_FANOUT_DEDUPE_WINDOW";
  public static final String IM_FANOUT_RECALL_WINDOW = "IM_FANOUT_RECALL_WINDOW";
  public static final String IM_LARGE_GROUP_THRESHOLD = "IM_LARGE_GROUP_THRESHOLD";

  public static FanoutConfig defaults() {
    return fromEnv(Map.of());
  }

  public FanoutConfig withLargeGroupThreshold(int threshold) {
    return new FanoutConfig(dedupeWindow, recallWindow, threshold);
  }

  public static FanoutConfig fromEnv(Map<String, String> environment) {
    Env env = new Env(environment);
    long day = Duration.ofDays(1).toMillis();
    return new FanoutConfig(
        Duration.ofMillis(env.durationMs(IM_FANOUT_DEDUPE_WINDOW, day, 60_000, 30 * day)),
        Duration.ofMillis(env.durationMs(IM_FANOUT_RECALL_WINDOW, 7 * day, 60_000, 365 * day)),
        env.integer(IM_LARGE_GROUP_THRESHOLD, 1_000, 0, 10_000_000));
  }
}
