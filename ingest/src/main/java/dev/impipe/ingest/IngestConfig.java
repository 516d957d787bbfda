package dev.impipe.ingest;

import dev.impipe.runtime.config.Env;
import java.time.Duration;
import java.util.Map;

/**
 * Settings of the ingest side.
 *
 * @param maxBodyChars longest accepted message body
 * @param maxDelay furthest accepted {@code deliverAt} (shared with the delay topology: {@code IM_DELAY_MAX})
 * @param publishTimeout how long a request waits for Kafka to acknowledge its record
 */
public record IngestConfig(int maxBodyChars, Duration maxDelay, Duration publishTimeout) {

  public static final String IM_MAX_BODY_CHARS = "IM_MAX_BODY_CHARS";
  public static final String IM_DELAY_MAX = "IM_DELAY_MAX";
  public static final String IM_PUBLISH_TIMEOUT = "IM_PUBLISH_TIMEOUT";

  public static IngestConfig defaults() {
    return fromEnv(Map.of());
  }

  public static IngestConfig fromEnv(Map<String, String> environment) {
    Env env = new Env(environment);
    long day = Duration.ofDays(1).toMillis();
    return new IngestConfig(
        env.integer(IM_MAX_BODY_CHARS, 10_000, 1, 1_000_000),
        Duration.ofMillis(env.durationMs(IM_DELAY_MAX, 2 * 366 * day, 1_000, 10 * 366 * day)),
        Duration.ofMillis(env.durationMs(IM_PUBLISH_TIMEOUT, 15_000, 1_000, 120_000)));
  }
}
