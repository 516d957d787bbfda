package dev.impipe.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** File tree helpers. */
public final class Dirs {

  private Dirs() {}

  /** Deletes {@code dir} and everything under it; best effort. */
  public static void deleteRecursively(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException e) {
          // best effort: a file still open elsewhere stays
        }
      });
    } catch (IOException e) {
      // best effort
    }
  }
}
