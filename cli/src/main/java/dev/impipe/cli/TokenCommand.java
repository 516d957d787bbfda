package dev.impipe.cli;

import dev.impipe.edge.auth.AuthConfig;
import dev.impipe.edge.auth.TokenIssuer;
import dev.impipe.runtime.config.Env;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.config.Setting;
import dev.impipe.runtime.domain.Ids;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code bin/im token USER [--device D] [--ttl DURATION]}: prints an HS256 token (only the token, one line) signed
 * with {@code IM_AUTH_HS256_SECRET} / {@code IM_AUTH_HS256_SECRET_FILE} when set, else with the secret of the running
 * {@code bin/im local}; {@code iss} / {@code aud} from {@code IM_AUTH_ISSUER} / {@code IM_AUTH_AUDIENCE}.
 */
@Command(name = "token", mixinStandardHelpOptions = true, description = {
    "print a bearer token (HS256) for USER, signed with the running `bin/im local`'s secret or with "
        + "IM_AUTH_HS256_SECRET / IM_AUTH_HS256_SECRET_FILE when set"})
final class TokenCommand implements Callable<Integer> {

  static final Duration DEFAULT_TTL = Duration.ofHours(1);
  private static final String ID_RULE = "1-" + Ids.MAX_LENGTH + " letters, digits, '.', '_', '-' or '@'";

  @Parameters(paramLabel = "USER", description = "the user id (the token's subject)")
  String user;

  @Option(names = "--device", paramLabel = "D", description = "the device id the token is bound to")
  String device;

  @Option(names = "--ttl", paramLabel = "DURATION", defaultValue = "1h", description = "how long the token is "
      + "valid, e.g. 15m, 1h, 7d (default ${DEFAULT-VALUE}, at most 30d)")
  String ttl;

  private final CliContext context;

  TokenCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    Duration lifetime = ttl(ttl);
    Optional<String> deviceId = Optional.ofNullable(device);
    // Checked before looking for a secret, so a typo is reported as such.
    if (!Ids.valid(user)) {
      throw new CliException("invalid user id '" + user + "': " + ID_RULE);
    }
    if (deviceId.isPresent() && !Ids.valid(deviceId.get())) {
      throw new CliException("invalid device id '" + deviceId.get() + "': " + ID_RULE);
    }
    TokenIssuer issuer = issuer(context.env());
    try {
      context.out().println(issuer.issue(user, deviceId, lifetime));
    } catch (IllegalArgumentException e) {
      throw new CliException(e.getMessage());
    }
    context.out().flush();
    return 0;
  }

  /** The environment's secret if set (like {@code tail}, the environment wins), else the running local instance's. */
  static TokenIssuer issuer(Map<String, String> env) {
    boolean secretInEnv = AuthConfig.HS256_SECRET.isSet(env) || AuthConfig.HS256_SECRET_FILE.isSet(env);
    Map<String, String> authEnv = new HashMap<>();
    for (Setting<?> setting : List.of(AuthConfig.ISSUER, AuthConfig.AUDIENCE, AuthConfig.HS256_SECRET,
        AuthConfig.HS256_SECRET_FILE)) {
      if (setting.isSet(env)) {
        authEnv.put(setting.name(), env.get(setting.name()));
      }
    }
    if (!secretInEnv) {
      Optional<Endpoints> local = Endpoints.readFile(env);
      if (local.isEmpty()) {
        throw new CliException("no secret to sign with: start `bin/im local` (it generates one), or set "
            + AuthConfig.IM_AUTH_HS256_SECRET + " or " + AuthConfig.IM_AUTH_HS256_SECRET_FILE);
      }
      Path file = local.get().authSecretFile().orElseThrow(() -> new CliException("the running `bin/im local` (pid "
          + local.get().pid() + ") keeps no token secret in a file; set " + AuthConfig.IM_AUTH_HS256_SECRET
          + " or " + AuthConfig.IM_AUTH_HS256_SECRET_FILE + " to the secret it was started with"));
      authEnv.put(AuthConfig.IM_AUTH_HS256_SECRET_FILE, file.toString());
    }
    // Only the HS256 variables: a JWKS URL in the environment is for verifying, and cannot mint tokens.
    return AuthConfig.fromEnv(authEnv).tokenIssuer().orElseThrow();
  }

  private static Duration ttl(String text) {
    try {
      return Duration.ofMillis(new Env(Map.of("--ttl", text)).durationMs("--ttl", DEFAULT_TTL.toMillis(), 1_000,
          TokenIssuer.MAX_TTL.toMillis()));
    } catch (InvalidConfigException e) {
      throw new CliException(e.getMessage() + " (between 1s and " + TokenIssuer.MAX_TTL.toDays() + "d)");
    }
  }
}
