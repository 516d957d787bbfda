package dev.impipe.cli;

import dev.impipe.edge.auth.AuthConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Local mode's token keys: when the user configured no key source, an HS256 secret generated once into
 * {@code <data dir>/auth/hs256.secret} (0600) and reused on restart, so tokens minted by {@code bin/im token} stay
 * valid across {@code --data-dir} restarts; a temp data dir gets a fresh one.
 */
final class LocalAuth {

  static final String SECRET_FILE = "hs256.secret";
  private static final int SECRET_BYTES = 32;
  static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> OWNER_ONLY_DIR = PosixFilePermissions.fromString("rwx------");

  /**
   * How local mode authenticates.
   *
   * @param generated true when local mode made (or reused) its own secret
   * @param secretFile the file holding the HS256 secret, if the secret lives in a file
   * @param config what the runtime will verify tokens with
   */
  record Setup(boolean generated, Optional<Path> secretFile, AuthConfig config) {

    /** The start-up line. */
    String describe() {
      if (generated) {
        return "auth: HS256 tokens (bin/im token USER), secret " + secretFile.orElseThrow();
      }
      return "auth: " + config.describe() + secretFile.map(f -> " from " + f).orElse("")
          + (config.hs256Secret().isPresent() ? " (bin/im token USER)" : "");
    }
  }

  private LocalAuth() {}

  /**
   * Fills in {@code env} (the runtime's environment) so it has a key source: unless one of
   * {@link AuthConfig#KEY_SOURCE_VARIABLES} is set, the secret in {@code root/auth} (created if missing) and
   * {@code IM_AUTH_DEV_TOKENS=true} (unless set). Validates the result.
   */
  static Setup configure(Map<String, String> env, Path root) {
    boolean userConfigured = Stream.of(AuthConfig.JWKS_URL, AuthConfig.HS256_SECRET, AuthConfig.HS256_SECRET_FILE)
        .anyMatch(s -> s.isSet(env));
    if (userConfigured) {
      Optional<Path> file = Optional.ofNullable(AuthConfig.HS256_SECRET_FILE.read(env)).map(Path::toAbsolutePath);
      return new Setup(false, file, AuthConfig.fromEnv(env));
    }
    Path file = ensureSecret(root.resolve("auth"));
    env.put(AuthConfig.IM_AUTH_HS256_SECRET_FILE, file.toString());
    env.putIfAbsent(AuthConfig.IM_AUTH_DEV_TOKENS, "true");
    return new Setup(true, Optional.of(file), AuthConfig.fromEnv(env));
  }

  /** The secret file in {@code dir}: reused when present (tightened to 0600), else 256 random bits, base64. */
  static Path ensureSecret(Path dir) {
    Path file = dir.resolve(SECRET_FILE).toAbsolutePath();
    try {
      createPrivateDirectory(dir);
      if (Files.exists(file)) {
        restrict(file);
        return file;
      }
      byte[] key = new byte[SECRET_BYTES];
      new SecureRandom().nextBytes(key);
      writePrivate(file, Base64.getEncoder().encodeToString(key) + "\n");
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the local token secret " + file, e);
    }
  }

  /**
   * Writes {@code text} to a new {@code file} created with owner-only permissions from the start (never readable by
   * others, not even briefly); a file another process created meanwhile is left as it is.
   */
  static void writePrivate(Path file, String text) throws IOException {
    try {
      if (posix(file.getParent())) {
        Files.createFile(file, PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE));
      } else {
        Files.createFile(file);
      }
    } catch (FileAlreadyExistsException raced) {
      return;
    }
    Files.writeString(file, text, StandardCharsets.US_ASCII, StandardOpenOption.TRUNCATE_EXISTING);
  }

  static void createPrivateDirectory(Path dir) throws IOException {
    if (Files.isDirectory(dir)) {
      return;
    }
    Files.createDirectories(dir.getParent());
    if (posix(dir.getParent())) {
      Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIR));
    } else {
      Files.createDirectory(dir);
    }
  }

  static void restrict(Path file) throws IOException {
    if (posix(file) && !Files.getPosixFilePermissions(file).equals(OWNER_ONLY_FILE)) {
      Files.setPosixFilePermissions(file, OWNER_ONLY_FILE);
    }
  }

  private static boolean posix(Path path) {
    return path.getFileSystem().supportedFileAttributeViews().contains("posix");
  }
}
