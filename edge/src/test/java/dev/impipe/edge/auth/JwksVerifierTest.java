package dev.impipe.edge.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** RS256/ES256 tokens checked against keys an identity provider publishes as a JWKS (a local HTTP endpoint here). */
@Timeout(60)
class JwksVerifierTest {

  private static RSAKey rsa;
  private static ECKey ec;

  private final AtomicReference<String> published = new AtomicReference<>();
  private final AtomicInteger fetches = new AtomicInteger();
  private HttpServer provider;
  private JwtVerifier verifier;

  @BeforeEach
  void startProvider() throws Exception {
    synchronized (JwksVerifierTest.class) {
      if (rsa == null) {
        rsa = new RSAKeyGenerator(2048).keyID("rsa-1").generate();
        ec = new ECKeyGenerator(Curve.P_256).keyID("ec-1").generate();
      }
    }
    provider = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    provider.createContext("/.well-known/jwks.json", exchange -> {
      fetches.incrementAndGet();
      byte[] body = published.get().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    provider.start();
  }

  @AfterEach
  void stop() {
    if (verifier != null) {
      verifier.close();
    }
    provider.stop(0);
  }

  @Test
  void rs256AndEs256TokensFromTheJwksAreAccepted() throws Exception {
    // Given the provider publishes an RSA and an EC key
    publish(rsa, ec);
    verifier = jwksVerifier(Map.of());

    // Then tokens signed with either are accepted
    Principal fromRsa = verifier.verify(sign(rsa, JWSAlgorithm.RS256, "alice"));
    Principal fromEc = verifier.verify(sign(ec, JWSAlgorithm.ES256, "bob"));
    assertThat(fromRsa.userId()).isEqualTo("alice");
    assertThat(fromEc.userId()).isEqualTo("bob");
    // and the JWKS was fetched once, then served from the cache
    assertThat(fetches).hasValue(1);
  }

  @Test
  void aKeyOfThatTypeButNotFromTheProviderIsRefused() throws Exception {
    publish(rsa);
    verifier = jwksVerifier(Map.of());
    RSAKey impostor = new RSAKeyGenerator(2048).keyID("rsa-1").generate();

    assertThatThrownBy(() -> verifier.verify(sign(impostor, JWSAlgorithm.RS256, "alice")))
        .isInstanceOf(AuthException.class).hasMessage("bad signature");
  }

  @Test
  void hs256IsNotAcceptedAgainstAPublicKey() throws Exception {
    // Algorithm confusion: an HS256 token "signed" with the published RSA modulus bytes
    publish(rsa);
    verifier = jwksVerifier(Map.of());
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("rsa-1").build(),
        TestTokens.claims("alice").build());
    jwt.sign(new MACSigner(rsa.toPublicJWK().toJSONString().getBytes(StandardCharsets.UTF_8)));

    assertThatThrownBy(() -> verifier.verify(jwt.serialize()))
        .isInstanceOf(AuthException.class).hasMessage("token algorithm HS256 not accepted");
  }

  @Test
  void aRotatedKeyIsPickedUpWithoutRestartAndAnUnknownKidIsRefused() throws Exception {
    // Given a verifier that has cached the provider's first key
    publish(rsa);
    verifier = jwksVerifier(Map.of());
    assertThat(verifier.verify(sign(rsa, JWSAlgorithm.RS256, "alice")).userId()).isEqualTo("alice");
    assertThat(fetches).hasValue(1);

    // When the provider rotates to a new key with a new kid (the old one withdrawn)
    RSAKey rotated = new RSAKeyGenerator(2048).keyID("rsa-2").generate();
    publish(rotated);

    // Then a token signed with the new key is accepted by the same verifier: the unknown kid forced a refetch
    assertThat(verifier.verify(sign(rotated, JWSAlgorithm.RS256, "bob")).userId()).isEqualTo("bob");
    assertThat(fetches).hasValue(2);

    // And a token naming a kid the provider does not publish is refused
    RSAKey unknown = new RSAKeyGenerator(2048).keyID("rsa-3").generate();
    assertThatThrownBy(() -> verifier.verify(sign(unknown, JWSAlgorithm.RS256, "mallory")))
        .isInstanceOf(AuthException.class).hasMessage("token signed with an unknown key");
    // And the second key keeps working from the cache
    assertThat(verifier.verify(sign(rotated, JWSAlgorithm.RS256, "carol")).userId()).isEqualTo("carol");
  }

  @Test
  void jwksAndHs256CanBeConfiguredTogether() throws Exception {
    publish(ec);
    Map<String, String> env = new HashMap<>(TestTokens.env());
    verifier = jwksVerifier(env);

    assertThat(verifier.verify(sign(ec, JWSAlgorithm.ES256, "alice")).userId()).isEqualTo("alice");
    assertThat(verifier.verify(TestTokens.token("bob")).userId()).isEqualTo("bob");
    assertThat(verifier.acceptedAlgorithms()).containsExactlyInAnyOrder(JWSAlgorithm.HS256, JWSAlgorithm.RS256,
        JWSAlgorithm.ES256);
  }

  @Test
  void anUnreachableProviderRefusesTokensWithoutHanging() throws Exception {
    publish(rsa);
    verifier = jwksVerifier(Map.of());
    provider.stop(0);

    long t0 = System.nanoTime();
    assertThatThrownBy(() -> verifier.verify(sign(rsa, JWSAlgorithm.RS256, "alice")))
        .isInstanceOf(AuthException.class).hasMessage("token signing keys unavailable, try again later")
        .matches(e -> ((AuthException) e).temporary(), "is temporary (answered 503, not 401)");
    assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(15_000);
  }

  private JwtVerifier jwksVerifier(Map<String, String> extra) {
    Map<String, String> env = new HashMap<>(extra);
    env.put(AuthConfig.IM_AUTH_JWKS_URL, "http://127.0.0.1:" + provider.getAddress().getPort()
        + "/.well-known/jwks.json");
    return AuthConfig.fromEnv(env).verifier();
  }

  private void publish(JWK... keys) {
    published.set(new JWKSet(List.of(keys).stream().map(JWK::toPublicJWK).toList()).toString());
  }

  private static String sign(JWK key, JWSAlgorithm alg, String user) throws JOSEException {
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(key.getKeyID()).build(),
        TestTokens.claims(user).build());
    jwt.sign(key instanceof RSAKey r ? new RSASSASigner(r) : new ECDSASigner((ECKey) key));
    return jwt.serialize();
  }
}
