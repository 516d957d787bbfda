package dev.impipe.notify.decide;

/**
 * Keys of {@link NotifyTopology#REGISTRATIONS_STORE}: {@code userId + "|" + deviceId}. Ids never contain {@code |}
 * (see {@code Ids}), so {@link #prefix(String)} names exactly one user's devices.
 */
public final class RegistrationKeys {

  /** Between the user and the device id. */
  public static final char SEPARATOR = '|';

  private RegistrationKeys() {}

  /** The key of one device's registration; {@link IllegalArgumentException} when an id holds the separator. */
  public static String key(String userId, String deviceId) {
    return prefix(userId) + requireClean(deviceId);
  }

  /** The prefix of every registration key of {@code userId}. */
  public static String prefix(String userId) {
    return requireClean(userId) + SEPARATOR;
  }

  /** The device id of a registration key. */
  public static String deviceOf(String key) {
    return key.substring(key.indexOf(SEPARATOR) + 1);
  }

  private static String requireClean(String id) {
    if (id == null || id.isEmpty() || id.indexOf(SEPARATOR) >= 0) {
      throw new IllegalArgumentException("an id must be non-empty and must not contain '" + SEPARATOR + "': '" + id
          + "'");
    }
    return id;
  }
}
