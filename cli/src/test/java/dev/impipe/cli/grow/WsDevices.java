package dev.impipe.cli.grow;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.push.client.DeviceClient;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One WebSocket device per user (device {@value #DEVICE}) on a push gateway, as an application uses the Java
 * {@link DeviceClient}: it stores each entry's message id, keeps the entry's cursor as its own position and ACKs it;
 * every connect passes that cursor ({@code ?cursor=}), so the gateway starts the backlog after what the device has,
 * not after what was committed. A close it did not ask for (4011, 4008, ...) is counted and it reconnects to the
 * same gateway with its cursor, as a client does. {@link Ws#connect} moves it to another gateway.
 */
final class WsDevices implements AutoCloseable {

  static final String DEVICE = "ws";

  private static final Duration RECONNECT = Duration.ofMillis(200);

  private final DeviceClient.Factory factory = DeviceClient.factory(1);
  private final List<Ws> devices = new ArrayList<>();

  WsDevices(List<String> users) {
    users.forEach(u -> devices.add(new Ws(u)));
  }

  List<Ws> devices() {
    return devices;
  }

  /** Connects every device to the push gateway on {@code port} with its own cursor; waits until each is synced. */
  void connectAll(int port, Duration atMost) {
    moveAll(port);
    awaitSynced(atMost);
  }

  /** Connects every device to the push gateway on {@code port} with its own cursor, not waiting. */
  void moveAll(int port) {
    devices.forEach(d -> d.connect(port));
  }

  /** Waits until every device's connection has sent its backlog ({@code synced}). */
  void awaitSynced(Duration atMost) {
    await().atMost(atMost).until(() -> noneFailed() && devices.stream().allMatch(Ws::synced));
  }

  /** Closes every device's socket; they stay offline until connected again. */
  void disconnectAll() {
    devices.forEach(Ws::disconnect);
  }

  /** True, or an AssertionError when a device was refused (it ends an Awaitility wait at once). */
  boolean noneFailed() {
    for (Ws d : devices) {
      if (d.failure != null) {
        throw new AssertionError(d.user + " failed", d.failure);
      }
    }
    return true;
  }

  @Override
  public void close() {
    disconnectAll();
    factory.close();
  }

  /** A user's WebSocket device. */
  final class Ws implements DeviceClient.Listener {

    final String user;
    private final String token;
    private final List<String> received = Collections.synchronizedList(new ArrayList<>());
    private final List<Integer> unexpectedCloses = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger connects = new AtomicInteger();
    /** The cursor of the last entry stored (null: none yet): what the next connect resumes after. */
    private volatile String cursor;
    /** The gateway's port (-1: offline), and the connection there (null while connecting). */
    private volatile int port = -1;
    private volatile DeviceClient client;
    private volatile boolean synced;
    private volatile Throwable failure;

    Ws(String user) {
      this.user = user;
      this.token = TestTokens.token(user, DEVICE);
    }

    /** Closes the current socket, if any, and connects to the gateway on {@code port} with the device's cursor. */
    void connect(int to) {
      disconnect();
      synchronized (this) {
        port = to;
        open(to);
      }
    }

    /** Closes the socket and waits for it to close (not under the lock: the close handler takes it). */
    void disconnect() {
      DeviceClient c;
      synchronized (this) {
        port = -1;
        synced = false;
        c = client;
        client = null;
      }
      if (c != null) {
        c.close();
        c.closedFuture().completeOnTimeout(0, 10, TimeUnit.SECONDS).join();
      }
    }

    private void open(int to) {
      synced = false;
      connects.incrementAndGet();
      factory.connect(URI.create("http://127.0.0.1:" + to), token, DEVICE, cursor, this).whenComplete((c, e) -> {
        synchronized (this) {
          if (e != null) {
            if (e instanceof DeviceClient.RefusedException r && r.status() >= 400 && r.status() < 500
                && r.status() != 429) {
              failure = e;
            } else if (port == to) {
              later(() -> reopen(to)); // a 503 or a failed connection: again, as a client does
            }
          } else if (port != to) {
            c.close(); // moved meanwhile
          } else {
            client = c;
          }
        }
      });
    }

    private synchronized void reopen(int to) {
      if (port == to && client == null) {
        open(to);
      }
    }

    private void later(Runnable task) {
      CompletableFuture.delayedExecutor(RECONNECT.toMillis(), TimeUnit.MILLISECONDS).execute(task);
    }

    private boolean current(DeviceClient c) {
      return c.base().getPort() == port && (client == null || client == c);
    }

    @Override
    public synchronized void entry(DeviceClient c, JsonNode entry, String entryCursor) {
      if (!current(c)) {
        return; // a socket it left: what it still brings is not stored
      }
      received.add(entry.path("messageId").asText());
      cursor = entryCursor;
      c.ack(entryCursor);
    }

    @Override
    public synchronized void synced(DeviceClient c, String syncedCursor) {
      if (current(c)) {
        synced = true;
      }
    }

    @Override
    public synchronized void closed(DeviceClient c, int code, String reason) {
      if (!current(c)) {
        return;
      }
      unexpectedCloses.add(code);
      client = null;
      synced = false;
      int to = port;
      later(() -> reopen(to));
    }

    boolean synced() {
      return synced;
    }

    /** The message ids received (and stored), in order. */
    List<String> received() {
      synchronized (received) {
        return List.copyOf(received);
      }
    }

    int receivedCount() {
      return received.size();
    }

    /** The close codes of sockets it did not close itself. */
    List<Integer> unexpectedCloses() {
      return List.copyOf(unexpectedCloses);
    }

    int connects() {
      return connects.get();
    }
  }
}
