package dev.impipe.notify;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.config.Setting;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Settings of the notification module, built from the environment by {@link #fromEnv(Map)}, a pure function. Provider
 * credentials are read from files ({@code *_FILE}) so they stay out of the environment and the logged config.
 *
 * @param after how long a registered device may go without receiving an inbox MESSAGE entry before it is notified
 * @param coalesce at most one notification per device and conversation per this window
 * @param previewChars characters of the body in the payload (0: no preview)
 * @param largeGroups whether members of read-diffused groups are notified
 * @param pushEndpoints URL prefixes a Web Push subscription endpoint must start with
 * @param maxAttempts sends of one notification (429/5xx/network errors) before it goes to the rejected topic
 * @param maxInFlight sends waiting for a provider's answer at once (per process)
 * @param pendingTracked messages kept one by one per device and conversation while they wait to be notified
 */
public record NotifyConfig(
    Duration after,
    Duration coalesce,
    int previewChars,
    boolean largeGroups,
    List<String> pushEndpoints,
    int maxAttempts,
    Duration retryBackoff,
    Duration maxRetryAfter,
    int maxInFlight,
    int maxEntriesPerPunctuation,
    int streamThreads,
    String vapidSubject,
    String vapidKeyFile,
    String webhookUrl,
    String webhookSecret,
    String fcmCredentialsFile,
    String fcmBaseUrl,
    String apnsKeyFile,
    String apnsKeyId,
    String apnsTeamId,
    String apnsTopic,
    String apnsBaseUrl,
    String apnsSandboxUrl,
    Duration sendTimeout,
    int pendingTracked) {

  public static final String IM_NOTIFY_AFTER = "IM_NOTIFY_AFTER";
  public static final String IM_NOTIFY_PUSH_ENDPOINTS = "IM_NOTIFY_PUSH_ENDPOINTS";

  /** The browser vendors' push services (Chrome/Edge/Opera: FCM; Firefox: Mozilla autopush; Safari: Apple). */
  public static final String DEFAULT_PUSH_ENDPOINTS = "https://fcm.googleapis.com/,"
      + "https://updates.push.services.mozilla.com/,https://web.push.apple.com/";

  public static final Setting<Duration> AFTER = Setting.duration(IM_NOTIFY_AFTER, "10s", "100ms", "1d",
      "a registered device that has not received an inbox message (ACK or cursor) this long after it was written is "
          + "notified");
  public static final Setting<Duration> COALESCE = Setting.duration("IM_NOTIFY_COALESCE", "60s", "0", "1d",
      "at most one notification per device and conversation per this window; it counts the messages it covers");
  public static final Setting<Integer> PREVIEW_CHARS = Setting.integer("IM_NOTIFY_PREVIEW_CHARS", 100, 0, 4000,
      "characters of the message body in the payload (`0`: no preview)");
  public static final Setting<Boolean> LARGE_GROUPS = Setting.bool("IM_NOTIFY_LARGE_GROUPS", false,
      "notify members of large (read-diffused) groups");
  public static final Setting<List<String>> PUSH_ENDPOINTS = Setting.<List<String>>parsed(IM_NOTIFY_PUSH_ENDPOINTS,
      "list", null, NotifyConfig::parsePrefixes,
      "comma-separated URL prefixes a Web Push endpoint must start with (else `400`); https, or http when set "
          + "explicitly (local push relays, tests)")
      .defaultDoc("the public browser push services (https)");
  public static final Setting<Integer> MAX_ATTEMPTS = Setting.integer("IM_NOTIFY_MAX_ATTEMPTS", 5, 1, 100,
      "sends of one notification (429, 5xx, network errors) before it goes to `im.rejected`");
  public static final Setting<Duration> RETRY_BACKOFF = Setting.duration("IM_NOTIFY_RETRY_BACKOFF", "1s", "1ms",
      "1h", "first retry delay, doubled per attempt, when the provider gives no `Retry-After`");
  public static final Setting<Duration> MAX_RETRY_AFTER = Setting.duration("IM_NOTIFY_MAX_RETRY_AFTER", "10m",
      "1ms", "1d", "longest `Retry-After` honoured (a longer one is cut to this)");
  public static final Setting<Integer> MAX_IN_FLIGHT = Setting.integer("IM_NOTIFY_MAX_IN_FLIGHT", 256, 1, 100_000,
      "sends waiting for a provider's answer at once (the sender pauses reading beyond it)");
  public static final Setting<Integer> MAX_ENTRIES_PER_PUNCTUATION = Setting.integer(
      "IM_NOTIFY_MAX_ENTRIES_PER_PUNCTUATION", 10_000, 1, 10_000_000,
      "most due timers one punctuation decides (one transaction); the rest follow in the next rounds");
  public static final Setting<Integer> STREAM_THREADS = Setting.integer("IM_NOTIFY_STREAM_THREADS", 1, 1, 64,
      "Streams threads of the deciding app");
  public static final Setting<String> VAPID_SUBJECT = Setting.string("IM_NOTIFY_VAPID_SUBJECT",
      "mailto:admin@localhost", "VAPID `sub` claim: a `mailto:` or `https:` contact for the push services");
  public static final Setting<String> VAPID_KEY_FILE = Setting.optional("IM_NOTIFY_VAPID_KEY_FILE",
      "PEM PKCS#8 P-256 private key of the VAPID key pair (mode 0600); without it Web Push is off")
      .defaultDoc("(local mode: generated in the data dir)");
  public static final Setting<String> WEBHOOK_URL = Setting.optional("IM_NOTIFY_WEBHOOK_URL",
      "where `webhook` registrations' notifications are POSTed (deployment configuration, never client input)");
  public static final Setting<String> WEBHOOK_SECRET = Setting.optional("IM_NOTIFY_WEBHOOK_SECRET",
      "HMAC-SHA256 key of the webhook's `X-Im-Signature` header (required with `IM_NOTIFY_WEBHOOK_URL`)").secret();
  public static final Setting<String> FCM_CREDENTIALS_FILE = Setting.optional("IM_NOTIFY_FCM_CREDENTIALS_FILE",
      "Firebase service-account JSON (mode 0600); without it FCM is off");
  public static final Setting<String> FCM_BASE_URL = Setting.string("IM_NOTIFY_FCM_BASE_URL",
      "https://fcm.googleapis.com", "FCM HTTP v1 base URL (tests: a local server)");
  public static final Setting<String> APNS_KEY_FILE = Setting.optional("IM_NOTIFY_APNS_KEY_FILE",
      "APNs token-auth key (`AuthKey_<id>.p8`, mode 0600); without it APNs is off");
  public static final Setting<String> APNS_KEY_ID = Setting.optional("IM_NOTIFY_APNS_KEY_ID", "the .p8 key's id");
  public static final Setting<String> APNS_TEAM_ID = Setting.optional("IM_NOTIFY_APNS_TEAM_ID",
      "the Apple developer team id");
  public static final Setting<String> APNS_TOPIC = Setting.optional("IM_NOTIFY_APNS_TOPIC",
      "the app's bundle id (`apns-topic`)");
  public static final Setting<String> APNS_BASE_URL = Setting.string("IM_NOTIFY_APNS_BASE_URL",
      "https://api.push.apple.com", "APNs production base URL (tests: a local HTTP/2 server)");
  public static final Setting<String> APNS_SANDBOX_URL = Setting.string("IM_NOTIFY_APNS_SANDBOX_URL",
      "https://api.sandbox.push.apple.com", "APNs development base URL, for registrations with `sandbox: true`");
  public static final Setting<Duration> SEND_TIMEOUT = Setting.duration("IM_NOTIFY_SEND_TIMEOUT", "10s", "100ms",
      "5m", "how long a provider may take to answer one send (then it counts as a failed attempt)");

  public static final Setting<Integer> PENDING_TRACKED = Setting.integer("IM_NOTIFY_PENDING_TRACKED", 1_000, 1,
      100_000, "messages kept one by one per device and conversation while they wait to be notified; older ones "
          + "are still counted, but a recall of one no longer lowers the count");

  public static final ConfigTable TABLE = ConfigTable.of("notify", AFTER, COALESCE, PREVIEW_CHARS, LARGE_GROUPS,
      PUSH_ENDPOINTS, MAX_ATTEMPTS, RETRY_BACKOFF, MAX_RETRY_AFTER, MAX_IN_FLIGHT, MAX_ENTRIES_PER_PUNCTUATION,
      STREAM_THREADS, VAPID_SUBJECT, VAPID_KEY_FILE, WEBHOOK_URL, WEBHOOK_SECRET, FCM_CREDENTIALS_FILE, FCM_BASE_URL,
      APNS_KEY_FILE, APNS_KEY_ID, APNS_TEAM_ID, APNS_TOPIC, APNS_BASE_URL, APNS_SANDBOX_URL, SEND_TIMEOUT,
      PENDING_TRACKED);

  public NotifyConfig {
    pushEndpoints = List.copyOf(pushEndpoints);
    if (webhookUrl != null && webhookSecret == null) {
      throw new InvalidConfigException("IM_NOTIFY_WEBHOOK_URL is set without IM_NOTIFY_WEBHOOK_SECRET: a webhook's "
          + "receiver must be able to verify what it gets");
    }
    if (apnsKeyFile != null && (apnsKeyId == null || apnsTeamId == null || apnsTopic == null)) {
      throw new InvalidConfigException("IM_NOTIFY_APNS_KEY_FILE needs IM_NOTIFY_APNS_KEY_ID, IM_NOTIFY_APNS_TEAM_ID "
          + "and IM_NOTIFY_APNS_TOPIC");
    }
  }

  /** The defaults (no provider configured but Web Push's allow-list). */
  public static NotifyConfig defaults() {
    return fromEnv(Map.of());
  }

  /** Reads the IM_NOTIFY_* variables; throws {@link InvalidConfigException} naming the variable. */
  public static NotifyConfig fromEnv(Map<String, String> environment) {
    ConfigValues v = TABLE.read(environment);
    List<String> endpoints = v.optional(PUSH_ENDPOINTS).orElse(parsePrefixes(DEFAULT_PUSH_ENDPOINTS));
    return new NotifyConfig(v.get(AFTER), v.get(COALESCE), v.get(PREVIEW_CHARS), v.get(LARGE_GROUPS), endpoints,
        v.get(MAX_ATTEMPTS), v.get(RETRY_BACKOFF), v.get(MAX_RETRY_AFTER), v.get(MAX_IN_FLIGHT),
        v.get(MAX_ENTRIES_PER_PUNCTUATION), v.get(STREAM_THREADS), v.get(VAPID_SUBJECT),
        v.optional(VAPID_KEY_FILE).orElse(null), v.optional(WEBHOOK_URL).orElse(null),
        v.optional(WEBHOOK_SECRET).orElse(null), v.optional(FCM_CREDENTIALS_FILE).orElse(null), v.get(FCM_BASE_URL),
        v.optional(APNS_KEY_FILE).orElse(null), v.optional(APNS_KEY_ID).orElse(null),
        v.optional(APNS_TEAM_ID).orElse(null), v.optional(APNS_TOPIC).orElse(null), v.get(APNS_BASE_URL),
        v.get(APNS_SANDBOX_URL), v.get(SEND_TIMEOUT), v.get(PENDING_TRACKED));
  }

  /** A copy with another timing (tests). */
  public NotifyConfig withTiming(Duration newAfter, Duration newCoalesce) {
    return new NotifyConfig(newAfter, newCoalesce, previewChars, largeGroups, pushEndpoints, maxAttempts,
        retryBackoff, maxRetryAfter, maxInFlight, maxEntriesPerPunctuation, streamThreads, vapidSubject, vapidKeyFile,
        webhookUrl, webhookSecret, fcmCredentialsFile, fcmBaseUrl, apnsKeyFile, apnsKeyId, apnsTeamId, apnsTopic,
        apnsBaseUrl, apnsSandboxUrl, sendTimeout, pendingTracked);
  }

  /** Whether a Web Push endpoint may be used: it starts with one of {@link #pushEndpoints()}. */
  public boolean endpointAllowed(String endpoint) {
    return endpoint != null && pushEndpoints.stream().anyMatch(endpoint::startsWith);
  }

  static List<String> parsePrefixes(String raw) {
    List<String> prefixes = Arrays.stream(raw.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    for (String p : prefixes) {
      String lower = p.toLowerCase(Locale.ROOT);
      // A bare scheme or host without a path end would let "https://push.example.com.attacker.net" through.
      if (!(lower.startsWith("https://") || lower.startsWith("http://"))
          || p.indexOf('/', lower.indexOf("//") + 2) == -1) {
        throw new InvalidConfigException(IM_NOTIFY_PUSH_ENDPOINTS + "='" + raw + "' is invalid: expected http(s) URL "
            + "prefixes that each end their host with '/' (e.g. https://fcm.googleapis.com/)");
      }
    }
    if (prefixes.isEmpty()) {
      throw new InvalidConfigException(IM_NOTIFY_PUSH_ENDPOINTS + " is empty");
    }
    return prefixes;
  }
}
