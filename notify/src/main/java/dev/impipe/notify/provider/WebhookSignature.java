package dev.impipe.notify.provider;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The webhook's signature, as payment providers sign theirs: {@code X-Im-Timestamp: <unix seconds>} and
 * {@code X-Im-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>}. A receiver recomputes it over the raw
 * body bytes, compares in constant time and refuses a timestamp outside its tolerance (a replayed old request).
 */
public final class WebhookSignature {

  public static final String TIMESTAMP_HEADER = "X-Im-Timestamp";
  public static final String SIGNATURE_HEADER = "X-Im-Signature";
  public static final String VERSION = "v1=";

  private WebhookSignature() {}

  /** The {@code X-Im-Signature} value of {@code body} sent at {@code timestamp} (unix seconds). */
  public static String sign(String secret, long timestamp, byte[] body) {
    return VERSION + HexFormat.of().formatHex(mac(secret, timestamp, body));
  }

  /**
   * Whether {@code signatureHeader} signs {@code body} at {@code timestampHeader} with {@code secret}, and the
   * timestamp is within {@code tolerance} of {@code now}. Never throws on malformed input (false).
   */
  public static boolean verify(String secret, String timestampHeader, byte[] body, String signatureHeader,
      Instant now, Duration tolerance) {
    if (secret == null || timestampHeader == null || signatureHeader == null || body == null) {
      return false;
    }
    long timestamp;
    try {
      timestamp = Long.parseLong(timestampHeader.trim());
    } catch (NumberFormatException e) {
      return false;
    }
    if (Math.abs(now.getEpochSecond() - timestamp) > tolerance.toSeconds()) {
      return false;
    }
    String header = signatureHeader.trim();
    if (!header.startsWith(VERSION)) {
      return false;
    }
    byte[] given;
    try {
      given = HexFormat.of().parseHex(header.substring(VERSION.length()));
    } catch (IllegalArgumentException e) {
      return false;
    }
    return MessageDigest.isEqual(mac(secret, timestamp, body), given);
  }

  private static byte[] mac(String secret, long timestamp, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      mac.update((timestamp + ".").getBytes(StandardCharsets.US_ASCII));
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
