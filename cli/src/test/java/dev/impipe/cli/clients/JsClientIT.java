package dev.impipe.cli.clients;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The JavaScript client library ({@code clients/js}) under Node's own test runner: its unit tests against a gateway
 * in memory, and its reconnect test against the whole pipeline in this JVM (1,000 messages, the receiver's socket
 * reset 20+ times, every message exactly once and in order). Skipped where {@code node} is not on the PATH
 * (Debian package {@code nodejs}; {@code .ci/run} installs it).
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class JsClientIT {

  private static final Path LIBRARY = Path.of("..", "clients", "js").toAbsolutePath().normalize();

  private static String node;

  @BeforeAll
  static void findNode() {
    node = onPath("node");
    Assumptions.assumeTrue(node != null, "node not found on the PATH: install Node 20+ (Debian: apt-get install -y"
        + " nodejs) to run the JavaScript client tests");
    Assumptions.assumeTrue(Files.isDirectory(LIBRARY), "no clients/js at " + LIBRARY);
  }

  @Test
  void unitTestsPassUnderNodesTestRunner() throws Exception {
    // When node --test runs in clients/js (no pipeline: the integration test skips itself)
    Run run = run(List.of(node, "--test", "--test-reporter=tap"), Map.of());

    // Then every test passes, and there are at least 10
    assertThat(run.exit()).as(run.output()).isZero();
    assertThat(run.output()).containsPattern("(?m)^# fail 0$");
    assertThat(count(run.output(), "pass")).as(run.output()).isGreaterThanOrEqualTo(10);
  }

  @Test
  void everyMessageArrivesExactlyOnceInOrderAcrossForcedDisconnects() throws Exception {
    // Node 22+ has a WebSocket global, Node 20.10+ behind a flag; Debian 12's nodejs (18) has none
    List<String> command = new ArrayList<>(List.of(node));
    if (!hasWebSocketGlobal(List.of())) {
      Assumptions.assumeTrue(hasWebSocketGlobal(List.of("--experimental-websocket")), "this node has no WebSocket"
          + " (Node 22+, or 20.10+ with --experimental-websocket): the JavaScript reconnect test is skipped");
      command.add("--experimental-websocket");
    }
    // the sender posts as fast as the pipeline takes it: above the default sends quota (20 a second); the receiver
    // reconnects 25 times in seconds: above the default socket opens per user (bursts of 10, then 30 a minute)
    Map<String, String> settings = Map.of("IM_QUOTA_SENDS_PER_SECOND", "1000", "IM_QUOTA_SENDS_BURST", "1000",
        "IM_PUSH_CONNECTS_PER_MINUTE", "6000");
    try (LocalPipeline pipeline = LocalPipeline.start("jsclient", settings)) {
      // When the reconnect test runs against the pipeline: 1,000 messages, the receiver cut 25 times
      command.addAll(List.of("--test", "--test-reporter=tap", "test/reconnect.integration.test.js"));
      Run run = run(command, Map.of("IM_JS_IT_URL", pipeline.url(), "IM_JS_IT_MESSAGES", "1000",
          "IM_JS_IT_KILLS", "25", "IM_JS_IT_RUN", Long.toString(System.nanoTime(), 36)));

      // Then it ran (not skipped) and saw 0 lost, 0 duplicated, in order, over at least 20 disconnects
      assertThat(run.exit()).as(run.output()).isZero();
      assertThat(count(run.output(), "skipped")).as(run.output()).isZero();
      assertThat(run.output()).contains("lost=0 duplicated=0 inOrder=true");
      String result = run.output().lines().filter(l -> l.contains("RESULT")).findFirst().orElseThrow();
      System.out.println("JsClientIT " + result.trim());
    }
  }

  private record Run(int exit, String output) {}

  private static Run run(List<String> command, Map<String, String> env) throws IOException, InterruptedException {
    Path log = Files.createTempFile("node-test-", ".log");
    ProcessBuilder pb = new ProcessBuilder(command).directory(LIBRARY.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile());
    pb.environment().putAll(env);
    Process p = pb.start();
    try {
      if (!p.waitFor(7, TimeUnit.MINUTES)) {
        throw new AssertionError("node --test did not finish in 7 minutes:\n" + Files.readString(log));
      }
      return new Run(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    } finally {
      p.destroyForcibly();
      Files.deleteIfExists(log);
    }
  }

  private static boolean hasWebSocketGlobal(List<String> flags) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(node));
    command.addAll(flags);
    command.addAll(List.of("-p", "typeof WebSocket"));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    p.waitFor();
    return out.equals("function");
  }

  private static int count(String tap, String what) {
    return tap.lines().filter(l -> l.startsWith("# " + what + " ")).mapToInt(l -> Integer.parseInt(l.substring(
        what.length() + 3).trim())).findFirst().orElse(-1);
  }

  private static String onPath(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      Path candidate = Path.of(dir, name);
      if (Files.isExecutable(candidate)) {
        return candidate.toString();
      }
    }
    return null;
  }
}
