package dev.impipe.ingest;

import dev.impipe.ingest.quota.QuotaConfig;
import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.Setting;
import dev.impipe.runtime.config.SharedSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Settings of the ingest side.
 *
 * @param maxBodyChars longest accepted message body
 * @param maxDelay furthest accepted {@code deliverAt} (shared with the delay topology: {@code IM_DELAY_MAX})
 * @param publishTimeout how long a request waits for Kafka to acknowledge its record
 * @param quotas the per-user rate limits of the routes
 */
public record IngestConfig(int maxBodyChars, Duration maxDelay, Duration publishTimeout, QuotaConfig quotas) {

  public static final String IM_MAX_BODY_CHARS = "IM_MAX_BODY_CHARS";
  public static final String IM_DELAY_MAX = SharedSettings.IM_DELAY_MAX;
  public static final String IM_PUBLISH_TIMEOUT = "IM_PUBLISH_TIMEOUT";

  public static final Setting<Integer> MAX_BODY_CHARS = Setting.integer(IM_MAX_BODY_CHARS, 10_000, 1, 1_000_000,
      "longest message body");
  public static final Setting<Duration> PUBLISH_TIMEOUT = Setting.duration(IM_PUBLISH_TIMEOUT, "15s", "1s", "2m",
      "how long an HTTP request waits for Kafka's acknowledgement");

  public static final ConfigTable TABLE = table();

  public static IngestConfig defaults() {
    return fromEnv(Map.of());
  }

  /** Reads the settings; throws {@code InvalidConfigException} naming the variable. */
  public static IngestConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    return new IngestConfig(values.get(MAX_BODY_CHARS), values.get(SharedSettings.DELAY_MAX),
        values.get(PUBLISH_TIMEOUT), QuotaConfig.from(values));
  }

  private static ConfigTable table() {
    List<Setting<?>> settings = new ArrayList<>(List.of(MAX_BODY_CHARS, PUBLISH_TIMEOUT));
    settings.addAll(QuotaConfig.SETTINGS);
    return new ConfigTable("ingest", settings, List.of()).alsoReading(SharedSettings.DELAY_MAX);
  }
}
