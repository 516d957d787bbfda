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
    if (preferred > 0) {
      try (ServerSocket socket = new ServerSocket()) {
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), preferred), 1);
        return preferred;
      } catch (IOException e) {
        // taken: fall through
      }
    }
    return next();
  }
}
