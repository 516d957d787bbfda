package dev.impipe.notify.provider;

import dev.impipe.notify.NotifyConfig;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The enabled providers of a deployment, by name ({@code WEBPUSH}, {@code FCM}, {@code APNS}, {@code WEBHOOK}: the
 * {@code PushRegistration.provider} symbols). A provider without its credentials is off: its registrations are refused
 * and a notification for it goes to the rejected topic.
 */
public final class Providers implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Providers.class);

  private final Map<String, Provider> byName = new LinkedHashMap<>();
  private final VapidKeys vapidKeys;

  /** The given providers; {@code vapidKeys} is the Web Push key pair or null. */
  public Providers(List<Provider> providers, VapidKeys vapidKeys) {
    providers.forEach(p -> byName.put(p.name(), p));
    this.vapidKeys = vapidKeys;
  }

  /**
   * The providers {@code config} has credentials for, sharing one HTTP/1.1 client (APNs has its own HTTP/2 client).
   *
   * @param vapidKeys the VAPID key pair (loaded from {@code IM_NOTIFY_VAPID_KEY_FILE}, or generated in local mode by
   *     the caller), or null: Web Push off
   */
  public static Providers fromConfig(NotifyConfig config, VapidKeys vapidKeys, Clock clock) {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(min(config.sendTimeout(), Duration.ofSeconds(10))).build();
    Duration timeout = config.sendTimeout();
    List<Provider> providers = new ArrayList<>();
    if (vapidKeys != null) {
      providers.add(new WebPushProvider(http, vapidKeys, config.vapidSubject(), timeout, clock,
          config::endpointAllowed));
    }
    if (config.fcmCredentialsFile() != null) {
      providers.add(new FcmProvider(http, FcmCredentials.load(secret(Path.of(config.fcmCredentialsFile()))),
          config.fcmBaseUrl(), timeout, clock));
    }
    if (config.apnsKeyFile() != null) {
      providers
          .add(new ApnsProvider(Pem.readPrivateKey(secret(Path.of(config.apnsKeyFile())), "EC"), config.apnsKeyId(),
              config.apnsTeamId(), config.apnsTopic(), config.apnsBaseUrl(), config.apnsSandboxUrl(), timeout, clock,
              null));
    }
    if (config.webhookUrl() != null) {
      providers.add(new WebhookProvider(http, config.webhookUrl(), config.webhookSecret(), timeout, clock));
    }
    return new Providers(providers, vapidKeys);
  }

  /** The VAPID key pair from {@code IM_NOTIFY_VAPID_KEY_FILE}, or null when it is not set. */
  public static VapidKeys vapidKeys(NotifyConfig config) {
    return config.vapidKeyFile() == null ? null : VapidKeys.load(secret(Path.of(config.vapidKeyFile())));
  }

  /** {@code file}, after a warning when others than its owner may read it (a credential's mode should be 0600). */
  static Path secret(Path file) {
    try {
      Set<PosixFilePermission> modes = Files.getPosixFilePermissions(file);
      if (modes.stream().anyMatch(m -> m.name().startsWith("GROUP") || m.name().startsWith("OTHERS"))) {
        LOG.warn("Credential file {} has mode {}; it holds a secret: chmod 600 it", file,
            PosixFilePermissions.toString(modes));
      }
    } catch (IOException | UnsupportedOperationException e) {
      // unreadable here: loading it reports that; no POSIX modes: nothing to check
    }
    return file;
  }

  /** The provider serving {@code name}'s registrations, if enabled. */
  public Optional<Provider> get(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  /** Names of the enabled providers, in a stable order. */
  public Set<String> enabled() {
    return java.util.Collections.unmodifiableSet(new java.util.LinkedHashSet<>(byName.keySet()));
  }

  /** The VAPID public key browsers subscribe with (base64url), when Web Push is on. */
  public Optional<String> vapidPublicKey() {
    return Optional.ofNullable(vapidKeys).map(VapidKeys::publicKeyBase64Url);
  }

  @Override
  public void close() {
    byName.values().forEach(Provider::close);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
