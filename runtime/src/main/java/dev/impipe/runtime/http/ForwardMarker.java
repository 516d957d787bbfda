package dev.impipe.runtime.http;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.OptionalLong;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The header an instance adds when it forwards a request to the owner of a key (or reads a large group's timeline
 * there): {@code v1.<expiresAtMillis>.<budgetMillis>.<hmac>}, the HMAC-SHA256 of method, raw URI, expiry and budget
 * under the cluster key. Only a marker that verifies means anything: a client cannot send one that makes an
 * instance skip routing, cut a budget or read an internal timeline. Identity is never carried by the marker: the
 * caller's own token travels with the request and is verified again by the owner.
 */
public final class ForwardMarker {

  public static final String HEADER = "X-Im-Forwarded";
  private static final String VERSION = "v1";
  /** A marker stays valid this long beyond its budget (clock skew between instances, queueing). */
  private static final long SLACK_MS = 5_000;

  private final SecretKeySpec key;

  public ForwardMarker(byte[] clusterKey) {
    this.key = new SecretKeySpec(clusterKey.clone(), "HmacSHA256");
  }

  /** A marker for forwarding {@code method rawUri} with {@code budgetMs} left. */
  public String sign(String method, String rawUri, long budgetMs, long nowMs) {
    long expires = nowMs + budgetMs + SLACK_MS;
    String payload = VERSION + "." + expires + "." + budgetMs;
    return payload + "." + mac(payload, method, rawUri);
  }

  /** The budget a valid, unexpired marker for exactly this request carries; empty otherwise. */
  public OptionalLong verify(String header, String method, String rawUri, long nowMs) {
    if (header == null) {
      return OptionalLong.empty();
    }
    String[] parts = header.split("\\.");
    if (parts.length != 4 || !parts[0].equals(VERSION)) {
      return OptionalLong.empty();
    }
    long expires;
    long budget;
    try {
      expires = Long.parseLong(parts[1]);
      budget = Long.parseLong(parts[2]);
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
    String expected = mac(parts[0] + "." + parts[1] + "." + parts[2], method, rawUri);
    if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
        parts[3].getBytes(StandardCharsets.US_ASCII)) || expires < nowMs || budget < 0) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(budget);
  }

  private String mac(String payload, String method, String rawUri) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      byte[] out = mac.doFinal((payload + "\n" + method + "\n" + rawUri).getBytes(StandardCharsets.UTF_8));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(out);
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }
}
