package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Base64;

/** Verifies a compact JWS as a receiver does and returns its header and claims. */
public final class JwtAssert {

  /** A verified token's parts. */
  public record Verified(JsonNode header, JsonNode claims) {}

  private JwtAssert() {}

  /** Checks the signature ({@code ES256}: JOSE r||s, 64 bytes; {@code RS256}) with {@code key}. */
  public static Verified verify(String token, PublicKey key) throws Exception {
    String[] parts = token.split("\\.");
    assertThat(parts).hasSize(3);
    ObjectMapper mapper = new ObjectMapper();
    JsonNode header = mapper.readTree(Base64.getUrlDecoder().decode(parts[0]));
    JsonNode claims = mapper.readTree(Base64.getUrlDecoder().decode(parts[1]));
    byte[] signature = Base64.getUrlDecoder().decode(parts[2]);
    String alg = header.path("alg").asText();
    Signature verifier = Signature.getInstance(alg.equals("ES256") ? "SHA256withECDSAinP1363Format" : "SHA256withRSA");
    if (alg.equals("ES256")) {
      assertThat(signature).as("ES256 signature r||s").hasSize(64);
    }
    verifier.initVerify(key);
    verifier.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
    assertThat(verifier.verify(signature)).as("JWT signature").isTrue();
    return new Verified(header, claims);
  }
}
