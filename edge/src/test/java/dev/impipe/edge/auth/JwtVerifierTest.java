package dev.impipe.edge.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** HS256 tokens against the rules every request is checked by. */
class JwtVerifierTest {

  private final JwtVerifier verifier = TestTokens.verifier();

  @Test
  void aValidTokenNamesItsUserDeviceAndExpiry() throws Exception {
    // Given a token for alice on her phone
    String token = TestTokens.token("alice", "phone-1");

    // When it is verified
    Principal principal = verifier.verify(token);

    // Then the principal is alice on phone-1, expiring in about an hour, carrying the raw token
    assertThat(principal.userId()).isEqualTo("alice");
    assertThat(principal.deviceId()).hasValue("phone-1");
    assertThat(principal.expiresAt()).isBetween(Instant.now().plus(Duration.ofMinutes(59)),
        Instant.now().plus(Duration.ofMinutes(61)));
    assertThat(principal.token()).isEqualTo(token);
    assertThat(principal.toString()).doesNotContain(token);
  }

  @Test
  void aTokenWithoutDeviceHasNoDevice() throws Exception {
    assertThat(verifier.verify(TestTokens.token("bob")).deviceId()).isEmpty();
    assertThat(verifier.verify(TestTokens.bearer("bob").substring("Bearer ".length())).userId()).isEqualTo("bob");
  }

  @Test
  void expiredTokensAreRefusedOnlyBeyondTheClockSkew() throws Exception {
    // Given a token valid from 12:00:00 to 13:00:00
    Instant issued = Instant.parse("2030-01-01T12:00:00Z");
    String token = issuerAt(issued, Map.of()).issue("alice", Optional.empty(), Duration.ofHours(1));
    AuthConfig config = AuthConfig.fromEnv(TestTokens.env());

    // It is 13:00:20: expired, but within the default 30 s skew
    assertThat(verifierAt(config, issued.plusSeconds(3600 + 20)).verify(token).userId()).isEqualTo("alice");
    // It is 13:00:31: beyond the skew
    assertThatThrownBy(() -> verifierAt(config, issued.plusSeconds(3600 + 31)).verify(token))
        .isInstanceOf(AuthException.class).hasMessage("token expired");
    // With IM_AUTH_CLOCK_SKEW=0 it is expired at 13:00:00 sharp
    AuthConfig strict = AuthConfig.fromEnv(with(TestTokens.env(), AuthConfig.IM_AUTH_CLOCK_SKEW, "0s"));
    assertThatThrownBy(() -> verifierAt(strict, issued.plusSeconds(3600)).verify(token))
        .isInstanceOf(AuthException.class).hasMessage("token expired");
    // And the fixture's expired token is refused by the real clock
    assertThatThrownBy(() -> verifier.verify(TestTokens.expired("alice")))
        .isInstanceOf(AuthException.class).hasMessage("token expired");
  }

  @Test
  void aTokenNotValidYetIsRefusedBeyondTheSkew() {
    Instant now = Instant.now();
    String early = TestTokens.signed(TestTokens.claims("alice").notBeforeTime(Date.from(now.plusSeconds(120))).build());
    assertThatThrownBy(() -> verifier.verify(early)).isInstanceOf(AuthException.class)
        .hasMessage("token not valid yet");
  }

  @Test
  void aTokenSignedWithAnotherKeyIsRefused() {
    assertThatThrownBy(() -> verifier.verify(TestTokens.signedWithOtherKey("alice")))
        .isInstanceOf(AuthException.class).hasMessage("bad signature");
  }

  @Test
  void aTamperedPayloadIsRefused() {
    // Given alice's token whose payload is swapped for one naming mallory
    String[] parts = TestTokens.token("alice").split("\\.");
    String mallory = TestTokens.token("mallory").split("\\.")[1];

    assertThatThrownBy(() -> verifier.verify(parts[0] + "." + mallory + "." + parts[2]))
        .isInstanceOf(AuthException.class).hasMessage("bad signature");
  }

  @Test
  void unsignedTokensAreRefused() {
    assertThatThrownBy(() -> verifier.verify(TestTokens.unsigned("alice")))
        .isInstanceOf(AuthException.class).hasMessage("unsigned token not accepted");
    // alg none with a (meaningless) signature part appended
    assertThatThrownBy(() -> verifier.verify(TestTokens.unsigned("alice") + "c2ln"))
        .isInstanceOf(AuthException.class);
  }

  @Test
  void anAlgorithmThatIsNotConfiguredIsRefused() throws Exception {
    // Given an RS256 token, while only HS256 is configured
    RSAKey rsa = new RSAKeyGenerator(2048).keyID("k1").generate();
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID("k1").build(),
        TestTokens.claims("alice").build());
    jwt.sign(new RSASSASigner(rsa));

    assertThatThrownBy(() -> verifier.verify(jwt.serialize()))
        .isInstanceOf(AuthException.class).hasMessage("token algorithm RS256 not accepted");

    // HS512 with the right secret is not HS256 either
    byte[] longSecret = new byte[64];
    SignedJWT hs512 = new SignedJWT(new JWSHeader(JWSAlgorithm.HS512), TestTokens.claims("alice").build());
    hs512.sign(new MACSigner(longSecret));
    assertThatThrownBy(() -> verifier.verify(hs512.serialize()))
        .isInstanceOf(AuthException.class).hasMessage("token algorithm HS512 not accepted");
  }

  @Test
  void theIssuerIsCheckedWhenConfigured() throws Exception {
    AuthConfig config = AuthConfig.fromEnv(with(TestTokens.env(), AuthConfig.IM_AUTH_ISSUER, "https://id.example"));
    JwtVerifier strict = config.verifier();

    assertThat(strict.verify(config.tokenIssuer().orElseThrow().issue("alice", Duration.ofMinutes(5))).userId())
        .isEqualTo("alice");
    assertThatThrownBy(() -> strict.verify(TestTokens.signed(TestTokens.claims("alice").issuer("https://evil.example")
        .build()))).isInstanceOf(AuthException.class).hasMessage("token issuer not accepted");
    assertThatThrownBy(() -> strict.verify(TestTokens.token("alice")))
        .as("no iss at all").isInstanceOf(AuthException.class).hasMessage("token issuer not accepted");
  }

  @Test
  void theAudienceIsCheckedWhenConfigured() throws Exception {
    AuthConfig config = AuthConfig.fromEnv(with(TestTokens.env(), AuthConfig.IM_AUTH_AUDIENCE, "im-api"));
    JwtVerifier strict = config.verifier();

    assertThat(strict.verify(config.tokenIssuer().orElseThrow().issue("alice", Duration.ofMinutes(5))).userId())
        .isEqualTo("alice");
    assertThat(strict.verify(TestTokens.signed(TestTokens.claims("alice").audience(List.of("other", "im-api"))
        .build())).userId()).as("one of several audiences").isEqualTo("alice");
    assertThatThrownBy(() -> strict.verify(TestTokens.signed(TestTokens.claims("alice").audience("other").build())))
        .isInstanceOf(AuthException.class).hasMessage("token audience not accepted");
    assertThatThrownBy(() -> strict.verify(TestTokens.token("alice")))
        .isInstanceOf(AuthException.class).hasMessage("token has no aud claim");
  }

  @Test
  void expIsRequired() {
    String noExp = TestTokens.signed(new JWTClaimsSet.Builder().subject("alice").issueTime(new Date()).build());
    assertThatThrownBy(() -> verifier.verify(noExp)).isInstanceOf(AuthException.class)
        .hasMessage("token has no exp claim");
  }

  @Test
  void subIsRequiredAndMustBeAValidUserId() {
    String noSub = TestTokens.signed(TestTokens.claims("x").subject(null).build());
    assertThatThrownBy(() -> verifier.verify(noSub)).isInstanceOf(AuthException.class)
        .hasMessage("token has no sub claim");
    for (String bad : List.of("", "a:b", "#g", "with space", "x".repeat(129))) {
      String token = TestTokens.signed(TestTokens.claims("x").subject(bad).build());
      assertThatThrownBy(() -> verifier.verify(token)).as(bad).isInstanceOf(AuthException.class)
          .hasMessage("token sub is not a valid user id");
    }
  }

  @Test
  void aDeviceClaimMustBeAValidId() {
    for (Object bad : List.of("a:b", "", 42)) {
      String token = TestTokens.signed(TestTokens.claims("alice").claim("dev", bad).build());
      assertThatThrownBy(() -> verifier.verify(token)).as(String.valueOf(bad)).isInstanceOf(AuthException.class)
          .hasMessage("token dev is not a valid device id");
    }
  }

  @Test
  void garbageIsRefusedWithAShortMessage() {
    assertThatThrownBy(() -> verifier.verify("")).isInstanceOf(AuthException.class).hasMessage("no token");
    assertThatThrownBy(() -> verifier.verify(null)).isInstanceOf(AuthException.class).hasMessage("no token");
    assertThatThrownBy(() -> verifier.verify("not-a-jwt")).isInstanceOf(AuthException.class)
        .hasMessage("malformed token");
    assertThatThrownBy(() -> verifier.verify("a.b.c")).isInstanceOf(AuthException.class)
        .hasMessage("malformed token");
  }

  @Test
  void aTokenOfAnotherTypeIsRefused() throws Exception {
    // An ID-token-like typ must not pass as an access token
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).type(new JOSEObjectType("logout+jwt"))
        .build(), TestTokens.claims("alice").build());
    jwt.sign(new MACSigner(Base64.getDecoder().decode(TestTokens.SECRET_BASE64)));
    assertThatThrownBy(() -> verifier.verify(jwt.serialize())).isInstanceOf(AuthException.class)
        .hasMessage("token type not accepted");
  }

  @Test
  void oneVerifierServesManyThreads() throws Exception {
    List<String> users = List.of("u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8");
    List<String> tokens = users.stream().map(TestTokens::token).toList();
    List<Thread> threads = new java.util.ArrayList<>();
    java.util.concurrent.ConcurrentLinkedQueue<String> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
    for (int t = 0; t < 4; t++) {
      Thread thread = new Thread(() -> {
        for (int i = 0; i < 500; i++) {
          int k = i % tokens.size();
          try {
            if (!verifier.verify(tokens.get(k)).userId().equals(users.get(k))) {
              failures.add("wrong user for " + users.get(k));
            }
          } catch (AuthException e) {
            failures.add(e.getMessage());
          }
        }
      });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    assertThat(failures).isEmpty();
  }

  @Test
  void theIssuerMintsWhatTheVerifierAccepts() throws Exception {
    TokenIssuer issuer = AuthConfig.fromEnv(TestTokens.env()).tokenIssuer().orElseThrow();
    String token = issuer.issue("carol", Optional.of("laptop"), Duration.ofMinutes(10));
    SignedJWT parsed = SignedJWT.parse(token);

    assertThat(parsed.getJWTClaimsSet().getJWTID()).isNotBlank();
    assertThat(parsed.getJWTClaimsSet().getIssueTime()).isNotNull();
    assertThat(Duration.between(parsed.getJWTClaimsSet().getIssueTime().toInstant(),
        parsed.getJWTClaimsSet().getExpirationTime().toInstant())).isEqualTo(Duration.ofMinutes(10));
    assertThat(verifier.verify(token).deviceId()).hasValue("laptop");
    assertThatThrownBy(() -> issuer.issue("a:b", Duration.ofMinutes(1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("invalid user id");
    assertThatThrownBy(() -> issuer.issue("a", Optional.of("bad device"), Duration.ofMinutes(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("invalid device id");
    assertThatThrownBy(() -> issuer.issue("a", Duration.ofDays(31))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> issuer.issue("a", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
  }

  private static TokenIssuer issuerAt(Instant now, Map<String, String> extra) {
    AuthConfig config = AuthConfig.fromEnv(merge(TestTokens.env(), extra));
    return new TokenIssuer(config.hs256Secret().orElseThrow(), config.issuer(), config.audience(),
        Clock.fixed(now, ZoneOffset.UTC));
  }

  private static JwtVerifier verifierAt(AuthConfig config, Instant now) {
    return new JwtVerifier(config, Clock.fixed(now, ZoneOffset.UTC));
  }

  static Map<String, String> with(Map<String, String> env, String name, String value) {
    return merge(env, Map.of(name, value));
  }

  private static Map<String, String> merge(Map<String, String> a, Map<String, String> b) {
    Map<String, String> m = new HashMap<>(a);
    m.putAll(b);
    return m;
  }
}
