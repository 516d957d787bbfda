package dev.impipe.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Loopback port helpers. */
public final class FreePorts {

  private FreePorts() {}

  /** A port free on 127.0.0.1 right now. */
  public static int next() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("No free port on 127.0.0.1", e);
    }
  }

  /** {@code preferred} if it is free on 127.0.0.1, else any free port. */
  public static int preferred(int preferred) {
    return preferredRun(preferred, 1);
  }

  /**
   * The first of {@code count} consecutive ports free on 127.0.0.1 right now: {@code preferred} (if above 0) when it
   * and the ones after it all are, else a run starting at a free port the system picks. Processes that listen on a
   * base port and the ones after it (a local cluster's instances) need the whole run: the port after a free one the
   * system picked is often in use by a connection.
   */
  public static int preferredRun(int preferred, int count) {
    if (preferred > 0 && runFree(preferred, count)) {
      return preferred;
    }
    for (int attempt = 0; attempt < 100; attempt++) {
      int base = next();
      if (runFree(base, count)) {
        return base;
      }
    }
    throw new IllegalStateException("No " + count + " consecutive free ports on 127.0.0.1");
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
