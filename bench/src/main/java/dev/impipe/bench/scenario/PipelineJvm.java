package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The pipeline in its own JVM: {@code dev.impipe.cli.Main run} against the benchmark's broker and registry, so that
 * its heap, RSS and file descriptors are its own and the load generators do not share its garbage collector.
 */
final class PipelineJvm implements AutoCloseable {
  final Process process;
  final URI base;
  private final HttpClient http = HttpClient.newHttpClient();

  private final Path logFile;

  private PipelineJvm(Process process, URI base, Path logFile) {
    this.process = process;
    this.base = base;
    this.logFile = logFile;
  }

  /** Starts {@code components} (an {@code IM_COMPONENTS} value) with {@code extraEnv}; returns once healthy. */
  static PipelineJvm start(BenchCluster cluster, PrintStream log, String components, Map<String, String> extraEnv)
      throws Exception {
    return start(cluster, log, components, extraEnv, 1024);
  }

  /** As {@link #start(BenchCluster, PrintStream, String, Map)} with a heap of at most {@code heapMb} MB. */
  static PipelineJvm start(BenchCluster cluster, PrintStream log, String components, Map<String, String> extraEnv,
      long heapMb) throws Exception {
    PipelineJvm jvm = launch(cluster, components, extraEnv, heapMb);
    jvm.awaitHealthy(cluster, components);
    return jvm;
  }

  /**
   * Starts the JVM without waiting for it ({@link #awaitHealthy}): several start side by side. Its HTTP port is
   * {@code IM_HTTP_PORT} of {@code extraEnv}, else of this process's environment, else a free one.
   */
  static PipelineJvm launch(BenchCluster cluster, String components, Map<String, String> extraEnv, long heapMb)
      throws Exception {
    String port = extraEnv.getOrDefault("IM_HTTP_PORT", System.getenv().getOrDefault("IM_HTTP_PORT", ""));
    if (port.isBlank() || port.equals("0")) {
      port = Integer.toString(dev.impipe.embedded.FreePorts.next());
    }
    Map<String, String> extra = new HashMap<>(extraEnv);
    extra.put("IM_HTTP_PORT", port);
    extra.put("IM_COMPONENTS", components);
    Map<String, String> env = cluster.env(extra);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Path logFile = Files.createTempFile("im-bench-pipeline-", ".log");
    ProcessBuilder pb =
        new ProcessBuilder(java, "-Xms256m", "-Xmx" + heapMb + "m", "-cp", System.getProperty("java.class.path"),
            "dev.impipe.cli.Main", "run").redirectErrorStream(true).redirectOutput(logFile.toFile());
    pb.environment().putAll(env);
    Process process = pb.start();
    return new PipelineJvm(process, URI.create("http://127.0.0.1:" + port), logFile);
  }

  /** Returns once {@code /health} answers 200; closes the JVM and throws if it exits or does not within 600 s. */
  void awaitHealthy(BenchCluster cluster, String components) throws Exception {
    try {
      BenchCluster.await("pipeline JVM healthy (log " + logFile + ")", Duration.ofSeconds(600), () -> {
        if (!process.isAlive()) {
          throw new IllegalStateException("the pipeline JVM exited; its log: " + logFile);
        }
        return status("/health") == 200;
      });
    } catch (Exception | Error e) {
      close();
      throw e;
    }
    cluster.step("running in its own JVM (pid " + process.pid() + ", " + base + "): " + components);
  }

  int port() {
    return base.getPort();
  }

  private int status(String path) {
    try {
      return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(5)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** Sum of the samples of {@code name} (Prometheus text) whose labels contain {@code labelPart}; 0 if none. */
  double metric(String name, String labelPart) {
    String text = scrape();
    double sum = 0;
    for (String line : text.split("\n")) {
      if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
        if (labelPart.isEmpty() || line.contains(labelPart)) {
          sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
      }
    }
    return sum;
  }

  /** The pipeline's {@code /metrics} text (Prometheus); empty if it does not answer. */
  String scrape() {
    try {
      return http.send(HttpRequest.newBuilder(base.resolve("/metrics")).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  /** Resident set size of process {@code pid} in bytes (0 where /proc is absent). */
  static long rss(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | RuntimeException e) {
      // not on Linux
    }
    return 0;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
