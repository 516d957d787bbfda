package dev.impipe.edge.auth;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.config.Setting;
import dev.impipe.edge.security.DevTokenGuard;
import dev.impipe.edge.security.LoopbackHosts;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * How bearer tokens are verified, built from the environment by {@link #fromEnv(Map)}. At least one key source is
 * required: the identity provider's JWKS (RS256/ES256) and/or an HS256 secret. There is deliberately no switch that
 * turns authentication off.
 *
 * @param jwksUrl the identity provider's JWKS document (RS256/ES256 keys)
 * @param hs256Secret the shared HS256 secret (local mode, tests, services that mint their own tokens)
 * @param issuer when present, the only accepted {@code iss}
 * @param audience when present, {@code aud} must contain it
 * @param clockSkew tolerance applied to {@code exp} and {@code nbf}
 * @param jwksRefresh how long fetched JWKS keys are cached (refreshed ahead of expiry, and at once on an unknown kid)
 * @param devTokens whether the dev-token endpoint may mint tokens (local mode only)
 */
public record AuthConfig(
    Optional<URI> jwksUrl,
    Optional<Secret> hs256Secret,
    Optional<String> issuer,
    Optional<String> audience,
    Duration clockSkew,
    Duration jwksRefresh,
    boolean devTokens) {

  public static final String IM_AUTH_JWKS_URL = "IM_AUTH_JWKS_URL";
  public static final String IM_AUTH_HS256_SECRET = "IM_AUTH_HS256_SECRET";
  public static final String IM_AUTH_HS256_SECRET_FILE = "IM_AUTH_HS256_SECRET_FILE";
  public static final String IM_AUTH_ISSUER = "IM_AUTH_ISSUER";
  public static final String IM_AUTH_AUDIENCE = "IM_AUTH_AUDIENCE";
  public static final String IM_AUTH_CLOCK_SKEW = "IM_AUTH_CLOCK_SKEW";
  public static final String IM_AUTH_JWKS_REFRESH = "IM_AUTH_JWKS_REFRESH";
  public static final String IM_AUTH_DEV_TOKENS = "IM_AUTH_DEV_TOKENS";

  /** The variables that configure a key source; local mode generates a secret when none of them is set. */
  public static final Set<String> KEY_SOURCE_VARIABLES =
      Set.of(IM_AUTH_JWKS_URL, IM_AUTH_HS256_SECRET, IM_AUTH_HS256_SECRET_FILE);

  /** HS256 needs a key at least as long as its hash (RFC 7518 section 3.2). */
  public static final int MIN_SECRET_BYTES = 32;

  public static final Setting<URI> JWKS_URL = Setting.parsed(IM_AUTH_JWKS_URL, "URL", null, AuthConfig::jwksUri,
      "the identity provider's JWKS (RS256/ES256 keys); `https://` (plain `http://` only for a loopback host: `localhost`, 127.0.0.0/8, `::1`)");
  public static final Setting<Secret> HS256_SECRET = Setting.parsed(IM_AUTH_HS256_SECRET, "base64", null,
      s -> Secret.fromBase64(IM_AUTH_HS256_SECRET, s), "HS256 secret, base64 (standard or URL-safe), at least 32 "
          + "bytes decoded: `openssl rand -base64 32`")
      .defaultDoc("(local mode: generated)").secret();
  public static final Setting<Path> HS256_SECRET_FILE = Setting.parsed(IM_AUTH_HS256_SECRET_FILE, "path", null,
      Path::of, "a file holding that base64 secret (e.g. a mounted Kubernetes secret); not together with "
          + "`IM_AUTH_HS256_SECRET`")
      .defaultDoc("(local mode: `<data dir>/auth/hs256.secret`)");
  public static final Setting<String> ISSUER = Setting.optional(IM_AUTH_ISSUER, "the only accepted `iss`")
      .defaultDoc("(not checked)");
  public static final Setting<String> AUDIENCE = Setting.optional(IM_AUTH_AUDIENCE, "`aud` must contain this value")
      .defaultDoc("(not checked)");
  public static final Setting<Duration> CLOCK_SKEW = Setting.duration(IM_AUTH_CLOCK_SKEW, "30s", "0", "10m",
      "tolerance for `exp` / `nbf` (0 to 10m)");
  public static final Setting<Duration> JWKS_REFRESH = Setting.duration(IM_AUTH_JWKS_REFRESH, "5m", "10s", "1d",
      "how long fetched JWKS keys are cached (10s to 1d)");
  public static final Setting<Boolean> DEV_TOKENS = Setting.bool(IM_AUTH_DEV_TOKENS, false,
      "enables the dev-token endpoint the browser client signs in with").defaultDoc("`false` (local mode: `true`)");

  /** How bearer tokens are verified (every process with HTTP routes). */
  public static final ConfigTable TABLE = ConfigTable.of("auth", JWKS_URL, HS256_SECRET, HS256_SECRET_FILE, ISSUER,
      AUDIENCE, CLOCK_SKEW, JWKS_REFRESH, DEV_TOKENS, DevTokenGuard.HOSTS, DevTokenGuard.ANY_INTERFACE);

  public AuthConfig {
    Objects.requireNonNull(jwksUrl, "jwksUrl");
    Objects.requireNonNull(hs256Secret, "hs256Secret");
    Objects.requireNonNull(issuer, "issuer");
    Objects.requireNonNull(audience, "audience");
    Objects.requireNonNull(clockSkew, "clockSkew");
    Objects.requireNonNull(jwksRefresh, "jwksRefresh");
    if (jwksUrl.isEmpty() && hs256Secret.isEmpty()) {
      throw new InvalidConfigException(noKeySourceMessage());
    }
  }

  /** Builds the config from environment variables; throws {@link InvalidConfigException} naming the variable. */
  public static AuthConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    Optional<URI> jwks = values.optional(JWKS_URL);
    Optional<Secret> inline = values.optional(HS256_SECRET);
    Optional<Path> file = values.optional(HS256_SECRET_FILE);
    if (inline.isPresent() && file.isPresent()) {
      throw new InvalidConfigException(IM_AUTH_HS256_SECRET + " and " + IM_AUTH_HS256_SECRET_FILE
          + " are both set: give the secret one way only");
    }
    Optional<Secret> secret = inline.or(() -> file.map(f -> Secret.fromFile(IM_AUTH_HS256_SECRET_FILE, f)));
    if (jwks.isEmpty() && secret.isEmpty()) {
      throw new InvalidConfigException(noKeySourceMessage());
    }
    return new AuthConfig(jwks, secret, values.optional(ISSUER), values.optional(AUDIENCE), values.get(CLOCK_SKEW),
        values.get(JWKS_REFRESH), values.get(DEV_TOKENS));
  }

  /** A verifier for this config; build it once and share it (it caches keys and, with a JWKS, runs a refresher). */
  public JwtVerifier verifier() {
    return new JwtVerifier(this, Clock.systemUTC());
  }

  /** An HS256 issuer with this config's secret, issuer and audience; empty when no secret is configured. */
  public Optional<TokenIssuer> tokenIssuer() {
    return hs256Secret.map(s -> new TokenIssuer(s, issuer, audience, Clock.systemUTC()));
  }

  /** One line for the start-up log, without the secret. */
  public String describe() {
    StringBuilder sb = new StringBuilder();
    jwksUrl.ifPresent(u -> sb.append("JWKS ").append(u).append(" (RS256/ES256)"));
    hs256Secret.ifPresent(s -> sb.append(sb.length() > 0 ? " + " : "").append("HS256 secret"));
    issuer.ifPresent(i -> sb.append(", iss ").append(i));
    audience.ifPresent(a -> sb.append(", aud ").append(a));
    return sb.toString();
  }

  private static String noKeySourceMessage() {
    return "no token key configured: set " + IM_AUTH_JWKS_URL + " (your identity provider's JWKS, RS256/ES256) or "
        + IM_AUTH_HS256_SECRET + " / " + IM_AUTH_HS256_SECRET_FILE + " (base64, at least " + MIN_SECRET_BYTES
        + " bytes; e.g. `openssl rand -base64 32`); `bin/im local` generates one by itself";
  }

  private static URI jwksUri(String value) {
    URI uri;
    try {
      uri = new URI(value);
    } catch (URISyntaxException e) {
      throw new InvalidConfigException(IM_AUTH_JWKS_URL + "='" + value + "' is not a URL");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (uri.getHost() == null || !(scheme.equals("https") || scheme.equals("http"))) {
      throw new InvalidConfigException(IM_AUTH_JWKS_URL + "='" + value + "' is invalid: expected an https:// URL");
    }
    // Keys fetched over plain HTTP could be swapped by anyone on the path; only the local machine is trusted.
    if (scheme.equals("http") && !LoopbackHosts.isLoopback(uri.getHost())) {
      throw new InvalidConfigException(IM_AUTH_JWKS_URL + "='" + value
          + "' must use https (plain http only for localhost)");
    }
    return uri;
  }

  @Override
  public String toString() {
    return "AuthConfig[" + describe() + ", clockSkew=" + clockSkew + ", jwksRefresh=" + jwksRefresh
        + ", devTokens=" + devTokens + "]";
  }

  /** An HS256 key; never printed, compared in constant time. */
  public static final class Secret {

    private final byte[] bytes;

    private Secret(byte[] bytes) {
      this.bytes = bytes.clone();
    }

    /** The key from raw bytes (at least {@link #MIN_SECRET_BYTES}). */
    public static Secret of(byte[] bytes) {
      if (bytes.length < MIN_SECRET_BYTES) {
        throw new IllegalArgumentException("an HS256 secret needs at least " + MIN_SECRET_BYTES + " bytes");
      }
      return new Secret(bytes);
    }

    /** Decodes base64 (standard or URL-safe); {@code variable} names the source in errors. */
    public static Secret fromBase64(String variable, String base64) {
      // Not the MIME decoder: it skips characters outside the alphabet, so a typo would silently become another key.
      String text = base64.replaceAll("\\s+", "");
      byte[] decoded;
      try {
        decoded = text.indexOf('-') >= 0 || text.indexOf('_') >= 0
            ? Base64.getUrlDecoder().decode(text) : Base64.getDecoder().decode(text);
      } catch (IllegalArgumentException e) {
        throw new InvalidConfigException(variable + " is not base64 (e.g. `openssl rand -base64 32`)");
      }
      if (decoded.length < MIN_SECRET_BYTES) {
        throw new InvalidConfigException(variable + " is too short: " + decoded.length + " bytes decoded, at least "
            + MIN_SECRET_BYTES + " needed (e.g. `openssl rand -base64 32`)");
      }
      return new Secret(decoded);
    }

    /** Reads a file holding the base64 secret; {@code variable} names the source in errors. */
    public static Secret fromFile(String variable, Path file) {
      String text;
      try {
        text = Files.readString(file, StandardCharsets.US_ASCII);
      } catch (IOException e) {
        throw new InvalidConfigException(variable + "='" + file + "' cannot be read: " + e.getMessage());
      }
      if (text.isBlank()) {
        throw new InvalidConfigException(variable + "='" + file + "' is empty");
      }
      return fromBase64(variable + " (" + file + ")", text);
    }

    /** A copy of the key bytes. */
    public byte[] bytes() {
      return bytes.clone();
    }

    /** The key, base64-encoded (what the variables and the secret file hold). */
    public String base64() {
      return Base64.getEncoder().encodeToString(bytes);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Secret other && MessageDigest.isEqual(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
      return bytes.length;
    }

    @Override
    public String toString() {
      return "Secret[***]";
    }
  }
}
