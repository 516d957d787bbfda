package dev.impipe.cli;

import dev.impipe.embedded.ClusterNodeMain;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** One child JVM of a {@link LocalCluster}: its role, number (1-based), port, and the process currently running it. */
public final class ClusterChild {

  /** What a child process is. */
  public enum Role { BROKER, INSTANCE }

  /** The cluster a child reports to: waits for it, logs its steps, hears of its exit. */
  interface Owner {

    void step(String message);

    void onExit(ClusterChild child, Process exited);
  }

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final Owner owner;
  private final Role role;
  private final int number;
  private final int port;
  private final List<String> command;
  private final Map<String, String> env;
  private final Path log;
  private volatile Process process;
  /** Length of the log when the current process started: its ready line comes after. */
  private volatile long readyFrom;

  ClusterChild(Owner owner, Role role, int number, int port, List<String> command, Map<String, String> env,
      Path log) {
    this.owner = owner;
    this.role = role;
    this.number = number;
    this.port = port;
    this.command = List.copyOf(command);
    this.env = Map.copyOf(env);
    this.log = log;
  }

  public Role role() {
    return role;
  }

  public int number() {
    return number;
  }

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  /** The process running it now (a restart replaces it). */
  Process process() {
    return process;
  }

  /** Length of the log when the current process started. */
  long readyFrom() {
    return readyFrom;
  }

  public Path log() {
    return log;
  }

  public boolean alive() {
    return process != null && process.isAlive();
  }

  /** SIGKILL: a crash (no controlled shutdown, no final commit); waits until the process is gone. */
  public void kill() throws InterruptedException {
    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
  }

  /** SIGTERM: an orderly stop; waits up to {@code timeout}, then kills. */
  public void stop(Duration timeout) throws InterruptedException {
    Process p = process;
    p.destroy();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** Starts the process again with the same command, ports and data, and waits until it serves. */
  public void restart() throws Exception {
    launch();
    awaitReady(Duration.ofMinutes(10));
    owner.step(describe() + " (restarted)");
  }

  String describe() {
    return role == Role.BROKER
        ? String.format(Locale.ROOT, "broker %d pid %d at 127.0.0.1:%d (log %s)", number, pid(), port, log)
        : String.format(Locale.ROOT, "instance %d pid %d at http://127.0.0.1:%d (all components, log %s)",
            number, pid(), port, log);
  }

  synchronized void launch() throws IOException {
    Files.createDirectories(log.getParent());
    readyFrom = Files.exists(log) ? Files.size(log) : 0;
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    builder.environment().putAll(env);
    process = builder.start();
    Process started = process;
    started.onExit().thenRun(() -> owner.onExit(this, started));
  }

  @Override
  public String toString() {
    return role.name().toLowerCase(Locale.ROOT) + " " + number;
  }

  /** Waits until a broker printed its ready line or an instance's {@code /health} says 200. */
  void awaitReady(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(this + " exited with " + process.exitValue() + " while starting; "
            + "its log: " + log + "\n" + tail(log));
      }
      if (role == ClusterChild.Role.BROKER ? logSince().contains(ClusterNodeMain.READY)
          : healthy(port)) {
        return;
      }
      Thread.sleep(200); // polling a child process: its log file / its health endpoint
    }
    throw new IllegalStateException(this + " not ready after " + timeout.toSeconds() + " s; log " + log);
  }

  private String logSince() throws IOException {
    if (!Files.exists(log)) {
      return "";
    }
    byte[] all = Files.readAllBytes(log);
    int from = (int) Math.min(readyFrom, all.length);
    return new String(all, from, all.length - from, StandardCharsets.UTF_8);
  }

  private static String tail(Path file) {
    try {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  private static boolean healthy(int port) {
    try {
      HttpResponse<Void> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
          .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
      return r.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
