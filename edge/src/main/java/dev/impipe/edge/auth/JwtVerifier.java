package dev.impipe.edge.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.factories.DefaultJWSVerifierFactory;
import com.nimbusds.jose.jca.JCAContext;
import com.nimbusds.jose.proc.JWSVerifierFactory;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.jwk.source.RateLimitReachedException;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.BadJWSException;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.JWSKeySelector;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.DefaultResourceRetriever;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import com.nimbusds.jwt.proc.JWTClaimsSetVerifier;
import dev.impipe.runtime.domain.Ids;
import java.io.Closeable;
import java.io.IOException;
import java.net.MalformedURLException;
import java.security.Key;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Verifies JWT bearer tokens with Nimbus JOSE+JWT: HS256 with the configured secret and/or RS256/ES256 with keys
 * from the identity provider's JWKS (cached, refreshed ahead of expiry, refetched at once when a token names a key
 * id the cache does not know, so a rotated key works without a restart). Only the configured algorithms are
 * accepted: {@code alg: none}, encrypted tokens and HS256 against a public key (algorithm confusion) are refused.
 * Thread-safe; build one per process and share it.
 */
public final class JwtVerifier implements TokenVerifier, AutoCloseable {

  /** The device claim. */
  public static final String DEVICE_CLAIM = "dev";

  /** Asymmetric algorithms accepted from a JWKS. */
  static final Set<JWSAlgorithm> JWKS_ALGORITHMS = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256);

  // A JWKS fetch blocks a request; an identity provider that does not answer must not hold it for long.
  static final int JWKS_CONNECT_TIMEOUT_MS = 2_000;
  static final int JWKS_READ_TIMEOUT_MS = 3_000;
  static final int JWKS_SIZE_LIMIT_BYTES = 256 * 1024;

  private static final Logger LOG = LoggerFactory.getLogger(JwtVerifier.class);

  private final Set<JWSAlgorithm> accepted;
  private final DefaultJWTProcessor<SecurityContext> processor;
  private final Optional<Closeable> jwksSource;

  /**
   * @param config key sources and claim rules
   * @param clock the time tokens are checked against (tests pass a fixed clock)
   */
  public JwtVerifier(AuthConfig config, Clock clock) {
    Set<JWSAlgorithm> algorithms = new HashSet<>();
    Optional<SecretKey> hmacKey = config.hs256Secret().map(s -> new SecretKeySpec(s.bytes(), "HmacSHA256"));
    hmacKey.ifPresent(k -> algorithms.add(JWSAlgorithm.HS256));
    Optional<JWKSource<SecurityContext>> jwks = config.jwksUrl().map(url -> jwkSource(config, url));
    jwks.ifPresent(j -> algorithms.addAll(JWKS_ALGORITHMS));
    this.accepted = Set.copyOf(algorithms);
    this.jwksSource = jwks.filter(Closeable.class::isInstance).map(Closeable.class::cast);

    Optional<JWSKeySelector<SecurityContext>> jwksSelector =
        jwks.map(source -> new JWSVerificationKeySelector<>(JWKS_ALGORITHMS, source));
    List<SecretKey> hmacKeys = hmacKey.map(List::of).orElse(List.of());
    JWSKeySelector<SecurityContext> selector = (JWSHeader header, SecurityContext context) -> {
      // Each algorithm has exactly one key source: an HS256 token is never checked against a JWKS public key.
      if (JWSAlgorithm.HS256.equals(header.getAlgorithm())) {
        return hmacKeys;
      }
      if (jwksSelector.isPresent() && JWKS_ALGORITHMS.contains(header.getAlgorithm())) {
        return jwksSelector.get().selectJWSKeys(header, context);
      }
      return List.<Key>of();
    };

    DefaultJWTProcessor<SecurityContext> p = new DefaultJWTProcessor<>();
    // Plain JWTs and RFC 9068 access tokens; an ID token or a logout token used as a bearer token has another typ.
    p.setJWSTypeVerifier(new DefaultJOSEObjectTypeVerifier<>(JOSEObjectType.JWT, new JOSEObjectType("at+jwt"), null));
    p.setJWSKeySelector(selector);
    if (hmacKey.isPresent()) {
      // HS256 is checked on every request: reuse one MACVerifier (stateless, thread-safe) instead of one per token.
      MACVerifier mac = macVerifier(hmacKey.get());
      DefaultJWSVerifierFactory general = new DefaultJWSVerifierFactory();
      SecretKey key = hmacKey.get();
      p.setJWSVerifierFactory(new JWSVerifierFactory() {
        @Override
        public JWSVerifier createJWSVerifier(JWSHeader header, Key candidate) throws JOSEException {
          return candidate == key ? mac : general.createJWSVerifier(header, candidate);
        }

        @Override
        public Set<JWSAlgorithm> supportedJWSAlgorithms() {
          return general.supportedJWSAlgorithms();
        }

        @Override
        public JCAContext getJCAContext() {
          return general.getJCAContext();
        }
      });
    }
    p.setJWTClaimsSetVerifier(new ClaimsRules(config, clock));
    this.processor = p;
  }

  @Override
  public Principal verify(String token) throws AuthException {
    if (token == null || token.isBlank()) {
      throw new AuthException("no token");
    }
    JWT jwt;
    try {
      jwt = JWTParser.parse(token.trim());
    } catch (ParseException e) {
      throw new AuthException("malformed token");
    }
    if (!(jwt instanceof SignedJWT signed)) {
      throw new AuthException(jwt.getHeader().getAlgorithm() == null
          || "none".equals(jwt.getHeader().getAlgorithm().getName())
              ? "unsigned token not accepted" : "encrypted token not accepted");
    }
    if (!accepted.contains(signed.getHeader().getAlgorithm())) {
      throw new AuthException("token algorithm " + safe(signed.getHeader().getAlgorithm().getName())
          + " not accepted");
    }
    JWTClaimsSet claims;
    try {
      claims = processor.process(signed, null);
    } catch (Refused e) {
      throw new AuthException(e.getMessage());
    } catch (BadJWSException e) {
      throw new AuthException("bad signature");
    } catch (BadJWTException e) {
      throw new AuthException("malformed token claims");
    } catch (BadJOSEException e) {
      String message = e.getMessage() == null ? "" : e.getMessage();
      throw new AuthException(message.contains("typ") ? "token type not accepted" : "token signed with an unknown key");
    } catch (RateLimitReachedException e) {
      // Another unknown kid within the refetch interval: the provider was asked moments ago and did not have it.
      throw new AuthException("token signed with an unknown key");
    } catch (KeySourceException e) {
      LOG.warn("cannot get the token signing keys: {}", e.toString());
      throw new AuthException("token signing keys unavailable, try again later", e, true);
    } catch (JOSEException e) {
      throw new AuthException("token could not be verified");
    }
    return principal(claims, token.trim());
  }

  private static Principal principal(JWTClaimsSet claims, String token) {
    Optional<String> device = Optional.ofNullable((String) claims.getClaim(DEVICE_CLAIM));
    return new Principal(claims.getSubject(), device, claims.getExpirationTime().toInstant(), token);
  }

  /** The algorithms this verifier accepts. */
  public Set<JWSAlgorithm> acceptedAlgorithms() {
    return accepted;
  }

  /** Stops the JWKS refresher, if any. */
  @Override
  public void close() {
    jwksSource.ifPresent(s -> {
      try {
        s.close();
      } catch (IOException e) {
        LOG.debug("closing the JWKS source", e);
      }
    });
  }

  private static JWKSource<SecurityContext> jwkSource(AuthConfig config, java.net.URI url) {
    long ttl = config.jwksRefresh().toMillis();
    // Nimbus needs refresh-ahead + refresh timeout below the lifetime.
    long refreshTimeout = Math.min(JWKSourceBuilder.DEFAULT_CACHE_REFRESH_TIMEOUT, ttl / 4);
    long refreshAhead = Math.min(JWKSourceBuilder.DEFAULT_REFRESH_AHEAD_TIME, ttl / 4);
    ExecutorService refresher = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "im-jwks-refresh");
      t.setDaemon(true);
      return t;
    });
    try {
      return JWKSourceBuilder.<SecurityContext>create(url.toURL(),
          new DefaultResourceRetriever(JWKS_CONNECT_TIMEOUT_MS, JWKS_READ_TIMEOUT_MS, JWKS_SIZE_LIMIT_BYTES))
          .cache(ttl, refreshTimeout)
          .refreshAheadCache(refreshAhead, null, refresher, true, null, false)
          // An unknown kid forces a refetch; at most two per interval, so forged kids cannot flood the provider.
          .rateLimited(JWKSourceBuilder.DEFAULT_RATE_LIMIT_MIN_INTERVAL)
          .retrying(true)
          .build();
    } catch (MalformedURLException e) {
      refresher.shutdown();
      throw new IllegalArgumentException("JWKS URL " + url, e);
    }
  }

  private static MACVerifier macVerifier(SecretKey key) {
    try {
      return new MACVerifier(key);
    } catch (JOSEException e) {
      throw new IllegalArgumentException("HS256 secret", e);
    }
  }

  /** Algorithm names come from the client: keep the echo short and printable. */
  private static String safe(String name) {
    String s = name.replaceAll("[^A-Za-z0-9+._-]", "?");
    return s.length() > 16 ? s.substring(0, 16) : s;
  }

  /** A claim rule failed; the message is what the client is told. */
  private static final class Refused extends BadJWTException {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message);
    }
  }

  /** exp / nbf with clock skew, sub and dev as valid ids, iss and aud when configured. */
  private static final class ClaimsRules implements JWTClaimsSetVerifier<SecurityContext> {

    private final Optional<String> issuer;
    private final Optional<String> audience;
    private final Duration skew;
    private final Clock clock;

    ClaimsRules(AuthConfig config, Clock clock) {
      this.issuer = config.issuer();
      this.audience = config.audience();
      this.skew = config.clockSkew();
      this.clock = clock;
    }

    @Override
    public void verify(JWTClaimsSet claims, SecurityContext context) throws BadJWTException {
      Instant now = clock.instant();
      Date exp = claims.getExpirationTime();
      if (exp == null) {
        throw new Refused("token has no exp claim");
      }
      if (!now.isBefore(exp.toInstant().plus(skew))) {
        throw new Refused("token expired");
      }
      Date nbf = claims.getNotBeforeTime();
      if (nbf != null && now.isBefore(nbf.toInstant().minus(skew))) {
        throw new Refused("token not valid yet");
      }
      if (issuer.isPresent() && !issuer.get().equals(claims.getIssuer())) {
        throw new Refused("token issuer not accepted");
      }
      if (audience.isPresent()) {
        List<String> aud = claims.getAudience();
        if (aud == null || aud.isEmpty()) {
          throw new Refused("token has no aud claim");
        }
        if (!aud.contains(audience.get())) {
          throw new Refused("token audience not accepted");
        }
      }
      String sub = claims.getSubject();
      if (sub == null) {
        throw new Refused("token has no sub claim");
      }
      if (!Ids.valid(sub)) {
        throw new Refused("token sub is not a valid user id");
      }
      Object dev = claims.getClaim(DEVICE_CLAIM);
      if (dev != null && !(dev instanceof String d && Ids.valid(d))) {
        throw new Refused("token dev is not a valid device id");
      }
    }
  }
}
