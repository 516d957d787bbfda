package dev.impipe.testkit;

import dev.impipe.embedded.Dirs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

/**
 * JUnit's {@code @TempDir} directories on {@code /dev/shm} where there is one with room (the default factory of every
 * module whose tests have testkit on their class path: testkit's {@code junit-platform.properties}). Tests hand these
 * directories to test drivers and brokers as state and log dirs, and a Streams test opens and closes RocksDB stores,
 * which creates and syncs a dozen files per store: on a disk that is most of a driver test's time and of the system
 * CPU of a mutation-testing run (inbox-store's conversations package: 3 min 22 s of PIT with its directories on ext4,
 * 1 min 42 s on /dev/shm, same result).
 *
 * <p>Each JVM gets its own parent directory, {@code <root>/im-tmp-<pid>}, removed at exit when its owners (JUnit, the
 * IT broker) left it empty; those of JVMs that are gone (killed, or exited before their owners cleaned up) are deleted
 * by the next JVM that makes one.
 * {@code IM_TEST_TMPDIR} (environment) or {@code im.test.tmpdir} (system property) names another root; {@code default}
 * keeps {@code java.io.tmpdir}.
 */
public final class TestTmpDir implements TempDirFactory {

  static final String PREFIX = "im-tmp-";
  /** Below this much free space {@code java.io.tmpdir} is used (a container's /dev/shm has 64 MB). */
  static final long MIN_FREE_BYTES = 2L * 1024 * 1024 * 1024;

  private static Path parent;

  @Override
  public Path createTempDirectory(AnnotatedElementContext elementContext, ExtensionContext extensionContext)
      throws IOException {
    return Files.createTempDirectory(parent(), "junit-");
  }

  /** A new directory for a test's own use (state and data dirs of the apps and brokers an IT starts). */
  public static Path newDir(String prefix) {
    try {
      return Files.createTempDirectory(parent(), prefix);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static synchronized Path parent() throws IOException {
    if (parent == null) {
      String configured = System.getProperty("im.test.tmpdir", System.getenv("IM_TEST_TMPDIR"));
      Path root = root(configured, Path.of("/dev/shm"));
      if (root == null) {
        parent = Path.of(System.getProperty("java.io.tmpdir"));
      } else {
        removeOrphans(root);
        Path dir = Files.createDirectories(root.resolve(PREFIX + ProcessHandle.current().pid()));
        // At exit only an empty one is removed: other shutdown hooks (the IT broker's) still use what is inside, and
        // deleting it under a running broker makes it halt the JVM. What is left is removed by the next JVM.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteIfEmpty(dir), "im-test-tmpdir-cleanup"));
        parent = dir;
      }
    }
    return parent;
  }

  /** The root to use, or null for {@code java.io.tmpdir}. */
  static Path root(String configured, Path shm) {
    if (configured != null && !configured.isBlank()) {
      return "default".equals(configured) ? null : Path.of(configured);
    }
    try {
      if (Files.isDirectory(shm) && Files.isWritable(shm)
          && Files.getFileStore(shm).getUsableSpace() >= MIN_FREE_BYTES) {
        return shm;
      }
    } catch (IOException | RuntimeException e) {
      // no usable /dev/shm
    }
    return null;
  }

  private static void deleteIfEmpty(Path dir) {
    try {
      Files.deleteIfExists(dir);
    } catch (IOException | RuntimeException e) {
      // not empty: the next JVM removes it
    }
  }

  /** Deletes {@code im-tmp-<pid>} directories whose process no longer exists. */
  static void removeOrphans(Path root) {
    try (var dirs = Files.newDirectoryStream(root, PREFIX + "*")) {
      for (Path dir : dirs) {
        String pid = dir.getFileName().toString().substring(PREFIX.length());
        if (!pid.isEmpty() && pid.chars().allMatch(Character::isDigit)
            && ProcessHandle.of(Long.parseLong(pid)).isEmpty()) {
          Dirs.deleteRecursively(dir);
        }
      }
    } catch (IOException | RuntimeException e) {
      // best effort: another JVM may be deleting the same orphan
    }
  }
}
