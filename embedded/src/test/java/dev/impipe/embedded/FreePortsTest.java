package dev.impipe.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** Free loopback ports, alone and in runs. */
class FreePortsTest {

  @Test
  void aRunWhosePortAfterThePreferredOneIsTakenStartsElsewhereAndIsFreeThroughout() throws Exception {
    int base = FreePorts.preferredRun(0, 3);
    try (ServerSocket taken = new ServerSocket()) {
      taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), base + 1), 1);

      int run = FreePorts.preferredRun(base, 3);

      assertThat(run).isNotEqualTo(base);
      assertThat(base + 1 < run || base + 1 > run + 2).as("the taken port outside the run").isTrue();
      for (int port = run; port < run + 3; port++) {
        try (ServerSocket socket = new ServerSocket()) {
          socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
        }
      }
    }
  }

  @Test
  void portsAreBelowTheRangeOutgoingConnectionsTakeTheirsFrom() {
    int low = FreePorts.ephemeralLow();
    for (int i = 0; i < 20; i++) {
      assertThat(FreePorts.next()).isBetween(FreePorts.LOWEST, low - 1);
      assertThat(FreePorts.preferredRun(0, 3)).isBetween(FreePorts.LOWEST, low - 3);
    }
  }

  @Test
  void aFreePreferredRunIsKept() {
    int base = FreePorts.preferredRun(0, 2);
    assertThat(FreePorts.preferredRun(base, 2)).isEqualTo(base);
  }
}
