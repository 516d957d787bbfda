package dev.impipe.bench;

import dev.impipe.embedded.EmbeddedKafka;
import java.io.IOException;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;

/**
 * The embedded broker in a JVM of its own, so that heap and RSS readings of the bench process are those of the
 * Streams apps and the load generator, not of the broker. Prints {@code BOOTSTRAP host:port} when ready and stops
 * (deleting its data) when its stdin closes.
 */
public final class BrokerMain {

  static final String READY = "BOOTSTRAP ";
  /** Broker properties to add or replace, {@code key=value} separated by commas (for experiments). */
  public static final String BROKER_PROPS = "IM_BENCH_BROKER_PROPS";

  private BrokerMain() {}

  public static void main(String[] args) throws IOException {
    Map<String, String> overrides = new HashMap<>();
    String props = System.getenv(BROKER_PROPS);
    if (props != null && !props.isBlank()) {
      for (String kv : props.split(",")) {
        int eq = kv.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException(BROKER_PROPS + ": '" + kv + "' is not key=value");
        }
        overrides.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
      }
    }
    try (EmbeddedKafka kafka = EmbeddedKafka.start(Files.createTempDirectory("im-kafka-"), true, 0, 0, overrides)) {
      System.out.println(READY + kafka.bootstrapServers());
      System.out.flush();
      while (System.in.read() >= 0) {
        // wait for the parent to close our stdin (or to die, which closes it too)
      }
    }
  }
}
