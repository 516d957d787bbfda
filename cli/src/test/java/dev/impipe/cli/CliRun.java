package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** One {@code bin/im} run in this JVM, with the given environment: its exit status, stdout and stderr. */
record CliRun(int status, String out, String err) {

  static CliRun of(Map<String, String> env, String... args) {
    return of(env, InputStream.nullInputStream(), args);
  }

  static CliRun of(Map<String, String> env, InputStream in, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(args, env, in, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new CliRun(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Asserts a usage or configuration error (status 2, nothing on stdout); returns stderr. */
  String usageError() {
    assertThat(status).as("exit status; stderr: %s", err).isEqualTo(2);
    assertThat(out).isEmpty();
    return err;
  }
}
