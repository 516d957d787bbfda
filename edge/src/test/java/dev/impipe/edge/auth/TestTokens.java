package dev.impipe.edge.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.Map;
import java.util.Optional;

/**
 * Tokens for tests of any module (runtime's test-jar): a fixed HS256 secret, the environment fragment that makes a
 * runtime accept it, and valid, expired, foreign-signed and unsigned tokens.
 *
 * <pre>{@code
 * Map<String, String> env = new HashMap<>(TestTokens.env());   // + the test's other variables
 * http.header("Authorization", TestTokens.bearer("alice"));
 * }</pre>
 */
public final class TestTokens {

  /** The fixed test secret (32 bytes), base64: what {@link #env()} sets as {@code IM_AUTH_HS256_SECRET}. */
  public static final String SECRET_BASE64 = base64("im-pipeline test secret, 32 byte");
  /** Another valid secret: tokens signed with it must be refused. */
  public static final String OTHER_SECRET_BASE64 = base64("some other secret, not the test1");

  /** Lifetime of {@link #token} tokens. */
  public static final Duration TTL = Duration.ofHours(1);

  private static final TokenIssuer ISSUER = issuer(SECRET_BASE64);
  private static final TokenIssuer OTHER = issuer(OTHER_SECRET_BASE64);

  private TestTokens() {}

  /** The environment fragment that configures a runtime with the test secret. */
  public static Map<String, String> env() {
    return Map.of(AuthConfig.IM_AUTH_HS256_SECRET, SECRET_BASE64);
  }

  /** {@code vars} plus {@link #env()}: a runtime environment that accepts the test tokens. */
  public static Map<String, String> env(Map<String, String> vars) {
    Map<String, String> all = new java.util.HashMap<>(env());
    all.putAll(vars);
    return all;
  }

  /** A verifier for the test secret (no issuer or audience). */
  public static JwtVerifier verifier() {
    return AuthConfig.fromEnv(env()).verifier();
  }

  /** A valid token for {@code user}, no device. */
  public static String token(String user) {
    return ISSUER.issue(user, Optional.empty(), TTL);
  }

  /** A valid token for {@code user} on {@code device}. */
  public static String token(String user, String device) {
    return ISSUER.issue(user, Optional.of(device), TTL);
  }

  /** {@code "Bearer " + token(user)}, for an Authorization header. */
  public static String bearer(String user) {
    return "Bearer " + token(user);
  }

  /** A token that expired an hour ago (well beyond any clock skew). */
  public static String expired(String user) {
    Instant twoHoursAgo = Instant.now().minus(Duration.ofHours(2));
    return new TokenIssuer(AuthConfig.Secret.fromBase64("test", SECRET_BASE64), Optional.empty(), Optional.empty(),
        Clock.fixed(twoHoursAgo, java.time.ZoneOffset.UTC)).issue(user, Optional.empty(), Duration.ofHours(1));
  }

  /** A well-formed token signed with another secret. */
  public static String signedWithOtherKey(String user) {
    return OTHER.issue(user, Optional.empty(), TTL);
  }

  /** An unsigned token ({@code alg: none}) with otherwise valid claims. */
  public static String unsigned(String user) {
    return new PlainJWT(claims(user).build()).serialize();
  }

  /** A token signed with the test secret carrying exactly {@code claims} (e.g. without exp or sub). */
  public static String signed(JWTClaimsSet claims) {
    SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
    try {
      jwt.sign(new MACSigner(Base64.getDecoder().decode(SECRET_BASE64)));
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
    return jwt.serialize();
  }

  /** Valid claims for {@code user} (sub, iat, exp in an hour), to modify in a test. */
  public static JWTClaimsSet.Builder claims(String user) {
    Instant now = Instant.now();
    return new JWTClaimsSet.Builder().subject(user).issueTime(Date.from(now)).expirationTime(Date.from(now.plus(TTL)));
  }

  private static TokenIssuer issuer(String secret) {
    return new TokenIssuer(AuthConfig.Secret.fromBase64("test", secret), Optional.empty(), Optional.empty(),
        Clock.systemUTC());
  }

  private static String base64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.US_ASCII));
  }
}
