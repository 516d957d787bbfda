package dev.impipe.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import java.util.Map;

/**
 * Local mode's Web Push key: unless {@code IM_NOTIFY_VAPID_KEY_FILE} is set, a P-256 key pair generated once into
 * {@code <data dir>/notify/vapid.pem} (PEM PKCS#8, 0600) and reused on restart, so browsers' subscriptions (bound to
 * the public key) stay valid across {@code --data-dir} restarts.
 */
final class LocalNotify {

  static final String VAPID_KEY_FILE = "IM_NOTIFY_VAPID_KEY_FILE";
  static final String KEY_FILE = "vapid.pem";

  private LocalNotify() {}

  /** Fills in {@code env} with the key file (created if missing); returns the start-up line. */
  static String configure(Map<String, String> env, Path root) {
    String configured = env.get(VAPID_KEY_FILE);
    if (configured != null && !configured.isBlank()) {
      return "notifications: VAPID key " + configured + " (" + VAPID_KEY_FILE + ")";
    }
    Path file = ensureKey(root.resolve("notify"));
    env.put(VAPID_KEY_FILE, file.toString());
    return "notifications: Web Push VAPID key " + file;
  }

  /** The key file in {@code dir}: reused when present (tightened to 0600), else a new P-256 private key. */
  static Path ensureKey(Path dir) {
    Path file = dir.resolve(KEY_FILE).toAbsolutePath();
    try {
      LocalAuth.createPrivateDirectory(dir);
      if (Files.exists(file)) {
        LocalAuth.restrict(file);
        return file;
      }
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"));
      byte[] pkcs8 = generator.generateKeyPair().getPrivate().getEncoded();
      LocalAuth.writePrivate(file, "-----BEGIN PRIVATE KEY-----\n"
          + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(pkcs8)
          + "\n-----END PRIVATE KEY-----\n");
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the local VAPID key " + file, e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK cannot make a P-256 key pair", e);
    }
  }
}
