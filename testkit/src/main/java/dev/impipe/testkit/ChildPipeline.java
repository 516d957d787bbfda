package dev.impipe.testkit;

import static org.awaitility.Awaitility.await;

import dev.impipe.runtime.app.PipelineComponent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A pipeline component in a JVM of its own, configured from environment variables, so a test can kill it with
 * SIGKILL (a real crash: no clean close, no final commit) and start it again on the same state dir.
 */
public final class ChildPipeline implements AutoCloseable {

  private final Process process;
  private final Path log;

  private ChildPipeline(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  /** Starts {@code component} with {@code env} (ImConfig variables etc.) and waits until its apps are RUNNING. */
  public static ChildPipeline start(Class<? extends PipelineComponent> component, Map<String, String> env, Path log) {
    ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx384m", "-cp", System.getProperty("java.class.path"), ChildPipelineMain.class.getName(),
        component.getName());
    // Children verify tokens with the test secret unless the test configures another key source.
    builder.environment().putAll(dev.impipe.edge.auth.TestTokens.env());
    builder.environment().putAll(env);
    builder.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    ChildPipeline child;
    try {
      child = new ChildPipeline(builder.start(), log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100)).until(() -> {
      if (!child.process.isAlive()) {
        throw new IllegalStateException("child pipeline exited:\n" + Files.readString(log));
      }
      return Files.readString(log).contains(ChildPipelineMain.RUNNING);
    });
    return child;
  }

  /** SIGKILL, and wait until it is gone. */
  public void kill() {
    try {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public Path log() {
    return log;
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          kill();
        }
      } catch (InterruptedException e) {
        kill();
        Thread.currentThread().interrupt();
      }
    }
  }
}
