package dev.impipe.notify.provider;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;

/** PKCS#8 private keys in PEM ({@code -----BEGIN PRIVATE KEY-----}): VAPID and APNs .p8 keys, FCM's RSA key. */
public final class Pem {

  private Pem() {}

  /** Reads {@code file}; {@code algorithm} is {@code EC} or {@code RSA}. */
  public static PrivateKey readPrivateKey(Path file, String algorithm) {
    try {
      return privateKey(Files.readString(file, StandardCharsets.US_ASCII), algorithm);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the key file " + file, e);
    }
  }

  /** Parses PEM text holding one PKCS#8 {@code PRIVATE KEY}. */
  public static PrivateKey privateKey(String pem, String algorithm) {
    int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
    int end = pem.indexOf("-----END PRIVATE KEY-----");
    if (begin < 0 || end < begin) {
      throw new IllegalArgumentException("not a PEM PKCS#8 private key (-----BEGIN PRIVATE KEY-----); convert it "
          + "with: openssl pkcs8 -topk8 -nocrypt -in key.pem -out key.p8");
    }
    String body = pem.substring(begin + "-----BEGIN PRIVATE KEY-----".length(), end).replaceAll("\\s", "");
    try {
      return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder()
          .decode(body)));
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IllegalArgumentException("not a PKCS#8 " + algorithm + " private key: " + e.getMessage(), e);
    }
  }

  /** The PEM text of {@code key} (PKCS#8). */
  public static String encode(PrivateKey key) {
    String b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded());
    return "-----BEGIN PRIVATE KEY-----\n" + b64 + "\n-----END PRIVATE KEY-----\n";
  }
}
