package dev.impipe.embedded;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for listeners, picked outside the range the kernel takes outgoing connections' local ports from
 * ({@code net.ipv4.ip_local_port_range}, 32768-60999 by default). A port the kernel hands out as free (a bind to port
 * 0) comes from that range, and between the check and the listener's own bind a client's connection can take it: an
 * embedded broker then failed to bind its controller port and Kafka exited the test JVM. Below the range only
 * listeners take ports, and each is checked free when picked.
 */
public final class FreePorts {

  /** The lowest port handed out: above the well-known and most registered service ports. */
  static final int LOWEST = 10_000;

  private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
  private static final int DEFAULT_EPHEMERAL_LOW = 32_768;

  private FreePorts() {}

  /** A port free on 127.0.0.1 right now, below the ephemeral range where it leaves room. */
  public static int next() {
    return pick(1);
  }

  /** {@code preferred} if it is free on 127.0.0.1, else any free port. */
  public static int preferred(int preferred) {
    return preferredRun(preferred, 1);
  }

  /**
   * The first of {@code count} consecutive ports free on 127.0.0.1 right now: {@code preferred} (if above 0) when it
   * and the ones after it all are, else a free run picked as {@link #next} picks. Processes that listen on a base
   * port and the ones after it (a local cluster's instances) need the whole run.
   */
  public static int preferredRun(int preferred, int count) {
    if (preferred > 0 && runFree(preferred, count)) {
      return preferred;
    }
    return pick(count);
  }

  /**
   * The first port of the kernel's ephemeral range (its default where it cannot be read). Read by line: {@code
   * Files.readString} of this procfs file returned its first byte only.
   */
  static int ephemeralLow() {
    try (BufferedReader reader = Files.newBufferedReader(EPHEMERAL_RANGE)) {
      return Integer.parseInt(reader.readLine().trim().split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return DEFAULT_EPHEMERAL_LOW;
    }
  }

  private static int pick(int count) {
    int highestBase = ephemeralLow() - count;
    if (highestBase - LOWEST >= 1_000) {
      for (int attempt = 0; attempt < 200; attempt++) {
        int base = LOWEST + ThreadLocalRandom.current().nextInt(highestBase - LOWEST + 1);
        if (runFree(base, count)) {
          return base;
        }
      }
    }
    // No room below the range (or all of it taken): ports the kernel picks.
    for (int attempt = 0; attempt < 100; attempt++) {
      int base = kernelPicked();
      if (runFree(base, count)) {
        return base;
      }
    }
    throw new IllegalStateException("No " + count + " consecutive free ports on 127.0.0.1");
  }

  private static int kernelPicked() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("No free port on 127.0.0.1", e);
    }
  }

  private static boolean runFree(int base, int count) {
    if (base + count - 1 > 65_535) {
      return false;
    }
    for (int port = base; port < base + count; port++) {
      try (ServerSocket socket = new ServerSocket()) {
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
      } catch (IOException e) {
        return false;
      }
    }
    return true;
  }
}
