package dev.impipe.notify.provider;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.util.Base64;

/**
 * Compact JWS signing (RFC 7515) for the providers' credentials: ES256 (VAPID, APNs) with the signature in JOSE's
 * {@code r || s} form (the JDK's P1363 format, not DER), RS256 (FCM's OAuth2 assertion).
 */
public final class Jwt {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

  private Jwt() {}

  /** A new JSON object for a header or claims. */
  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  /** {@code header.claims.signature}, signed with ES256 ({@code alg} set in the header). */
  public static String es256(ObjectNode header, ObjectNode claims, PrivateKey key) {
    return sign(header.put("alg", "ES256"), claims, key, "SHA256withECDSAinP1363Format");
  }

  /** {@code header.claims.signature}, signed with RS256 ({@code alg} set in the header). */
  public static String rs256(ObjectNode header, ObjectNode claims, PrivateKey key) {
    return sign(header.put("alg", "RS256"), claims, key, "SHA256withRSA");
  }

  private static String sign(ObjectNode header, ObjectNode claims, PrivateKey key, String algorithm) {
    String input = b64(header.toString()) + "." + b64(claims.toString());
    try {
      Signature signature = Signature.getInstance(algorithm);
      signature.initSign(key);
      signature.update(input.getBytes(StandardCharsets.US_ASCII));
      return input + "." + B64.encodeToString(signature.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot sign a JWT with " + algorithm + ": " + e.getMessage(), e);
    }
  }

  private static String b64(String json) {
    return B64.encodeToString(json.getBytes(StandardCharsets.UTF_8));
  }
}
