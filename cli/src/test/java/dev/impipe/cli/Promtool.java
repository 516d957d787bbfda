package dev.impipe.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Prometheus' own linter, where it is installed (Debian: {@code apt-get install prometheus}). */
final class Promtool {

  private Promtool() {}

  /** The promtool on the PATH, if any. */
  static Optional<Path> find() {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(java.io.File.pathSeparator)) {
      Path candidate = Path.of(dir, "promtool");
      if (Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  /** The problems {@code promtool check metrics} finds in {@code exposition}, one per line; null without promtool. */
  static List<String> checkMetrics(String exposition) throws IOException, InterruptedException {
    Optional<Path> promtool = find();
    if (promtool.isEmpty()) {
      return null;
    }
    Process p = new ProcessBuilder(promtool.get().toString(), "check", "metrics").redirectErrorStream(true).start();
    try (OutputStream in = p.getOutputStream()) {
      in.write(exposition.getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("promtool check metrics did not finish within 60 s");
    }
    return out.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
  }
}
