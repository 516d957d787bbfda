package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.push.client.DeviceClient;
import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A test device that behaves like a client should with gateways in {@code owned} mode: it follows a {@code redirect}
 * (close 4013) to the url it names (at once the first time since its last backlog, after 200 ms after that),
 * reconnects to some live instance after any other close or a refused upgrade (after 200 ms), ACKs every entry and
 * keeps each entry once by {@code source} and {@code seq}, as the device protocol tells clients to (a reconnect sends
 * again what was pushed and not yet committed).
 */
final class RoamingDevice implements DeviceClient.Listener {

  final String user;
  final String device;
  private final String token;
  private final DeviceClient.Factory factory;
  private final Supplier<URI> anyInstance;
  /** Every entry kept (first time its source and seq came), in arrival order. */
  final List<JsonNode> kept = new CopyOnWriteArrayList<>();
  private final Map<String, Long> last = new HashMap<>();
  final AtomicInteger repeats = new AtomicInteger();
  final AtomicInteger redirects = new AtomicInteger();
  final AtomicInteger connects = new AtomicInteger();
  /** What happened last (a close, a refused connect), for failure messages. */
  volatile String lastEvent = "";
  private volatile DeviceClient current;
  private volatile boolean stopped;
  /** Redirects since the last connection that delivered its backlog. */
  private final AtomicInteger redirectsInARow = new AtomicInteger();

  RoamingDevice(String user, String device, String token, DeviceClient.Factory factory, Supplier<URI> anyInstance) {
    this.user = user;
    this.device = device;
    this.token = token;
    this.factory = factory;
    this.anyInstance = anyInstance;
  }

  RoamingDevice connect(URI base) {
    connects.incrementAndGet();
    factory.connect(base, token, device, this).whenComplete((c, e) -> {
      if (e != null) {
        lastEvent = "connect to " + base + " failed: " + e;
        later(() -> connect(anyInstance.get()));
      } else {
        current = c;
        if (stopped) {
          c.close();
        }
      }
    });
    return this;
  }

  /** The port of the instance this device is connected to now (-1: none). */
  int port() {
    DeviceClient c = current;
    return c != null && c.isOpen() && c.syncedFuture().isDone() && !c.syncedFuture().isCompletedExceptionally()
        ? c.base().getPort() : -1;
  }

  @Override
  public synchronized void entry(DeviceClient c, JsonNode entry, String cursor) {
    String source = entry.path("source").asText();
    long seq = entry.path("seq").asLong();
    long before = last.getOrDefault(source, -1L);
    if (seq > before) {
      kept.add(entry);
      last.put(source, seq);
    } else {
      repeats.incrementAndGet();
    }
    c.ack(cursor);
  }

  @Override
  public void synced(DeviceClient c, String cursor) {
    redirectsInARow.set(0);
  }

  @Override
  public void redirect(DeviceClient c, String url, String reason) {
    redirects.incrementAndGet();
  }

  @Override
  public void closed(DeviceClient c, int code, String reason) {
    if (stopped) {
      return;
    }
    String url = c.redirectUrl();
    lastEvent = "closed " + code + " " + reason + " by " + c.base() + (url == null ? "" : ", redirect " + url);
    if (code == Connection.CLOSE_MOVED && url != null) {
      if (redirectsInARow.getAndIncrement() == 0) {
        connect(URI.create(url));
      } else {
        later(() -> connect(URI.create(url)));
      }
    } else {
      later(() -> connect(anyInstance.get()));
    }
  }

  /** The bodies of the MESSAGE entries kept, in arrival order. */
  List<String> bodies() {
    return kept.stream().filter(e -> e.path("type").asText().equals("MESSAGE")).map(e -> e.path("body").asText())
        .toList();
  }

  void stop() {
    stopped = true;
    DeviceClient c = current;
    if (c != null) {
      c.close();
    }
  }

  private static void later(Runnable r) {
    CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS).execute(r);
  }

  @Override
  public String toString() {
    return user + "/" + device + " kept " + kept.size() + " repeats " + repeats + " redirects " + redirects;
  }
}
