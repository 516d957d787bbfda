package dev.impipe.bench;

import dev.impipe.runtime.embedded.EmbeddedKafka;
import java.io.IOException;

/**
 * The embedded broker in a JVM of its own, so that heap and RSS readings of the bench process are those of the
 * Streams apps and the load generator, not of the broker. Prints {@code BOOTSTRAP host:port} when ready and stops
 * (deleting its data) when its stdin closes.
 */
public final class BrokerMain {

  static final String READY = "BOOTSTRAP ";

  private BrokerMain() {}

  public static void main(String[] args) throws IOException {
    try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
      System.out.println(READY + kafka.bootstrapServers());
      System.out.flush();
      while (System.in.read() >= 0) {
        // wait for the parent to close our stdin (or to die, which closes it too)
      }
    }
  }
}
