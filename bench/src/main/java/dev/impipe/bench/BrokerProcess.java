package dev.impipe.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The benchmark's own Kafka broker: {@link BrokerMain} (KRaft) in a child JVM, its stderr in a log file. */
final class BrokerProcess {

  private final Process process;
  private final String bootstrap;

  private BrokerProcess(Process process, String bootstrap) {
    this.process = process;
    this.bootstrap = bootstrap;
  }

  /**
   * Starts the broker JVM ({@code -Xmx1g} plus {@code extraOptions}, space-separated: a GC log, a profiler agent)
   * and returns once it printed its bootstrap address; its log goes to {@code brokerLog}.
   */
  static BrokerProcess start(Path brokerLog, String extraOptions) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-Xmx1g"));
    if (extraOptions != null && !extraOptions.isBlank()) {
      command.addAll(List.of(extraOptions.trim().split("\\s+")));
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), BrokerMain.class.getName()));
    Process process = new ProcessBuilder(command).redirectError(brokerLog.toFile()).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith(BrokerMain.READY)) {
        return new BrokerProcess(process, line.substring(BrokerMain.READY.length()).trim());
      }
    }
    throw new IllegalStateException("the broker JVM exited before it was ready; its log: "
        + Files.readString(brokerLog));
  }

  String bootstrap() {
    return bootstrap;
  }

  long pid() {
    return process.pid();
  }

  /** Asks the broker to stop (its stdin closes) and waits up to a minute, then ends it forcibly. */
  void stop() {
    try {
      process.getOutputStream().close();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (IOException e) {
      process.destroyForcibly();
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
