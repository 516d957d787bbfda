package dev.impipe.edge.auth;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * Who a request acts as, from a verified bearer token: {@code sub} is the user, the optional {@code dev} claim the
 * device. {@code token} is the raw token, so an instance that forwards a request to the owner of a key can pass it
 * on (the owner verifies it again).
 */
public record Principal(String userId, Optional<String> deviceId, Instant expiresAt, String token) {

  public Principal {
    Objects.requireNonNull(userId, "userId");
    Objects.requireNonNull(deviceId, "deviceId");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(token, "token");
  }

  /** True when this principal is {@code user}. */
  public boolean is(String user) {
    return userId.equals(user);
  }

  @Override
  public String toString() {
    // Never log the token itself.
    return "Principal[" + userId + deviceId.map(d -> "/" + d).orElse("") + "]";
  }
}
