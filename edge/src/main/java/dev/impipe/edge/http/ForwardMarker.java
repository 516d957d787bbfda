package dev.impipe.edge.http;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Iterator;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The header an instance adds when it forwards a request to the owner of a key (or reads a large group's timeline
 * there): {@code v2.<expiresAtMillis>.<budgetMillis>.<nonce>.<hmac>}, the HMAC-SHA256 under the cluster key of the
 * payload and of the exact request it forwards: method, raw URI (path and query), the {@code Authorization} it
 * carries and the SHA-256 of its body. Only a marker that verifies means anything: a client cannot send one that
 * makes an instance skip routing, cut a budget or read an internal timeline. A marker is good for one request:
 * another method, path, query, caller or body does not verify, it expires with its budget plus a short slack, and
 * its nonce is accepted once (a replay within its lifetime is treated as an unmarked request). Identity is never
 * carried by the marker: the caller's own token travels with the request and is verified again by the owner.
 */
public final class ForwardMarker {

  public static final String HEADER = "X-Im-Forwarded";
  private static final String VERSION = "v2";
  /** A marker stays valid this long beyond its budget (clock skew between instances, queueing). */
  private static final long SLACK_MS = 5_000;
  /** Nonces remembered at most (each until its marker expires); beyond it a marker is refused, never trusted. */
  static final int MAX_REMEMBERED = 200_000;

  private final SecretKeySpec key;
  private final SecureRandom random = new SecureRandom();
  /** Nonce -> expiry of the markers accepted and not yet expired. */
  private final Map<String, Long> used = new ConcurrentHashMap<>();

  public ForwardMarker(byte[] clusterKey) {
    this.key = new SecretKeySpec(clusterKey.clone(), "HmacSHA256");
  }

  /** A marker for forwarding {@code request} with {@code budgetMs} left (its token travels with it). */
  public String sign(Request request, long budgetMs, long nowMs) {
    return sign(request.method(), request.rawUri(), forwardedAuthorization(request), request.body(), budgetMs,
        nowMs);
  }

  /** A marker for forwarding {@code method rawUri} with header {@code authorization} (may be null) and {@code body}. */
  public String sign(String method, String rawUri, String authorization, byte[] body, long budgetMs, long nowMs) {
    long expires = nowMs + budgetMs + SLACK_MS;
    byte[] n = new byte[12];
    random.nextBytes(n);
    String nonce = Base64.getUrlEncoder().withoutPadding().encodeToString(n);
    String payload = VERSION + "." + expires + "." + budgetMs + "." + nonce;
    return payload + "." + mac(payload, method, rawUri, authorization, body);
  }

  /** The {@code Authorization} a forwarded copy of {@code request} carries: its own, or its verified token. */
  public static String forwardedAuthorization(Request request) {
    String authorization = request.headers().get("authorization");
    if (authorization == null && request.principal() != null) {
      authorization = "Bearer " + request.principal().token();
    }
    return authorization;
  }

  /**
   * The budget a valid, unexpired, not yet used marker for exactly this request carries; empty otherwise. A marker
   * that verifies is used up by this call.
   */
  public OptionalLong verify(String header, String method, String rawUri, String authorization, byte[] body,
      long nowMs) {
    if (header == null) {
      return OptionalLong.empty();
    }
    String[] parts = header.split("\\.");
    if (parts.length != 5 || !parts[0].equals(VERSION)) {
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
    String expected = mac(parts[0] + "." + parts[1] + "." + parts[2] + "." + parts[3], method, rawUri,
        authorization, body);
    if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
        parts[4].getBytes(StandardCharsets.US_ASCII)) || expires < nowMs || budget < 0) {
      return OptionalLong.empty();
    }
    if (used.size() >= MAX_REMEMBERED) {
      forgetExpired(nowMs);
      if (used.size() >= MAX_REMEMBERED) {
        return OptionalLong.empty();
      }
    }
    if (used.putIfAbsent(parts[3], expires) != null) {
      return OptionalLong.empty();
    }
    if ((used.size() & 1023) == 0) {
      forgetExpired(nowMs);
    }
    return OptionalLong.of(budget);
  }

  private void forgetExpired(long nowMs) {
    for (Iterator<Long> it = used.values().iterator(); it.hasNext();) {
      if (it.next() < nowMs) {
        it.remove();
      }
    }
  }

  private String mac(String payload, String method, String rawUri, String authorization, byte[] body) {
    try {
      byte[] bodyHash = MessageDigest.getInstance("SHA-256").digest(body == null ? new byte[0] : body);
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      mac.update((payload + "\n" + method + "\n" + rawUri + "\n" + (authorization == null ? "" : authorization)
          + "\n").getBytes(StandardCharsets.UTF_8));
      byte[] out = mac.doFinal(bodyHash);
      return Base64.getUrlEncoder().withoutPadding().encodeToString(out);
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }
}
