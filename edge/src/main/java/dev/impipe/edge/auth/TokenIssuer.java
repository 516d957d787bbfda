package dev.impipe.edge.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.KeyLengthException;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.impipe.runtime.domain.Ids;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * Mints HS256 tokens with the shared secret (local mode's {@code bin/im token}, the dev-token endpoint, tests):
 * {@code sub}, optional {@code dev}, {@code iat}, {@code exp}, {@code jti}, and {@code iss} / {@code aud} when
 * configured. Thread-safe.
 */
public final class TokenIssuer {

  /** Longest lifetime a minted token may have. */
  public static final Duration MAX_TTL = Duration.ofDays(30);

  private static final JWSHeader HEADER = new JWSHeader.Builder(JWSAlgorithm.HS256).type(JOSEObjectType.JWT).build();

  private final MACSigner signer;
  private final Optional<String> issuer;
  private final Optional<String> audience;
  private final Clock clock;

  public TokenIssuer(AuthConfig.Secret secret, Optional<String> issuer, Optional<String> audience, Clock clock) {
    try {
      this.signer = new MACSigner(secret.bytes());
    } catch (KeyLengthException e) {
      throw new IllegalArgumentException("HS256 secret too short", e);
    }
    this.issuer = Objects.requireNonNull(issuer, "issuer");
    this.audience = Objects.requireNonNull(audience, "audience");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * A signed token for {@code user} (and {@code device}) valid for {@code ttl}.
   *
   * @throws IllegalArgumentException when an id is invalid or the ttl is not in (0, {@link #MAX_TTL}]
   */
  public String issue(String user, Optional<String> device, Duration ttl) {
    if (!Ids.valid(user)) {
      throw new IllegalArgumentException("invalid user id '" + user + "': 1-" + Ids.MAX_LENGTH
          + " letters, digits, '.', '_', '-' or '@'");
    }
    device.filter(d -> !Ids.valid(d)).ifPresent(d -> {
      throw new IllegalArgumentException("invalid device id '" + d + "': 1-" + Ids.MAX_LENGTH
          + " letters, digits, '.', '_', '-' or '@'");
    });
    if (ttl.compareTo(Duration.ofSeconds(1)) < 0 || ttl.compareTo(MAX_TTL) > 0) {
      throw new IllegalArgumentException("token lifetime must be between 1s and " + MAX_TTL.toDays() + "d");
    }
    // JWT times are whole seconds; truncating keeps exp exactly iat + ttl.
    Instant now = clock.instant().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder()
        .subject(user)
        .issueTime(Date.from(now))
        .expirationTime(Date.from(now.plus(ttl)))
        .jwtID(UUID.randomUUID().toString());
    device.ifPresent(d -> claims.claim(JwtVerifier.DEVICE_CLAIM, d));
    issuer.ifPresent(claims::issuer);
    audience.ifPresent(claims::audience);
    SignedJWT jwt = new SignedJWT(HEADER, claims.build());
    try {
      jwt.sign(signer);
    } catch (JOSEException e) {
      throw new IllegalStateException("HS256 signing failed", e);
    }
    return jwt.serialize();
  }

  /** A token for {@code user} without a device. */
  public String issue(String user, Duration ttl) {
    return issue(user, Optional.empty(), ttl);
  }
}
