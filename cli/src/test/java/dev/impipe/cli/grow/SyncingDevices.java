package dev.impipe.cli.grow;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.edge.http.Json;
import dev.impipe.inbox.query.SyncCursor;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One phone per user that syncs its user's inbox over HTTP in a loop, as a client does: {@code GET .../sync} after
 * its cursor (its first one without: after its committed cursor), then {@code PUT .../cursor} with the page's cursor
 * (retried until accepted), then a pause unless the page said there is more. Each phone syncs the inbox store of the
 * generation it is told ({@link Phone#moveTo}; -1: it waits at a clean point, after a sync and its commit). Its
 * first sync against generation 1 with a generation-0 cursor is answered 409 and it resyncs from the cursor in the
 * answer. A failed connection, a 5xx or a 429 is retried (the same request); any other answer fails the phone. A
 * phone keeps every entry's message id in the order it received them.
 */
final class SyncingDevices implements AutoCloseable {

  static final String DEVICE = "phone";

  private static final Duration PAUSE = Duration.ofMillis(400);
  private static final Duration RETRY = Duration.ofMillis(100);
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  private final Map<Integer, Integer> ports;
  private final List<Phone> phones = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final AtomicBoolean running = new AtomicBoolean(true);

  /**
   * @param ports the HTTP port of each generation's inbox store (read at every sync: a generation may be added)
   */
  SyncingDevices(int users, Map<Integer, Integer> ports) {
    this.ports = ports;
    for (int u = 0; u < users; u++) {
      phones.add(new Phone("u" + u));
    }
  }

  void start() {
    for (Phone p : phones) {
      Thread t = new Thread(p, "phone-" + p.user);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
  }

  List<Phone> phones() {
    return phones;
  }

  /** True, or an AssertionError when a phone failed (it ends an Awaitility wait at once). */
  boolean noneFailed() {
    for (Phone p : phones) {
      if (p.failure != null) {
        throw new AssertionError(p.user + " failed", p.failure);
      }
    }
    return true;
  }

  /**
   * Waits until the inbox store on {@code port} shows each phone's committed cursor at least at its value in
   * {@code cursors} ({@code user|device} to inbox seq, as read from its cursor topic): a 409 then resyncs from it.
   */
  void awaitCommitted(int port, Map<String, Long> cursors) {
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
      for (Phone p : phones) {
        HttpResponse<String> r = p.send("GET", port, "/v1/users/" + p.user + "/devices/" + DEVICE + "/cursor", null);
        if (r == null || r.statusCode() != 200
            || Json.MAPPER.readTree(r.body()).get("seq").asLong() < cursors.getOrDefault(p.user + "|" + DEVICE, -1L)) {
          return false;
        }
      }
      return true;
    });
  }

  /** A 5xx, or a 429 (too many of the user's requests waiting): the same request again. */
  private static boolean retried(int status) {
    return status >= 500 || status == 429;
  }

  @Override
  public void close() throws InterruptedException {
    running.set(false);
    for (Thread t : threads) {
      t.join(30_000);
    }
  }

  /** A user's phone. Written by its own thread; read by the test while it runs (sizes) and after {@link #close}. */
  final class Phone implements Runnable {

    final String user;
    private final String token;
    private final List<String> received = Collections.synchronizedList(new ArrayList<>());
    private final List<String> resyncs = Collections.synchronizedList(new ArrayList<>());
    private volatile int target;
    private volatile boolean waiting;
    private final AtomicInteger receivedInGeneration0 = new AtomicInteger();
    private final AtomicLong syncs = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();
    private volatile Throwable failure;
    private String cursor;

    Phone(String user) {
      this.user = user;
      this.token = TestTokens.token(user, DEVICE);
    }

    /** Syncs {@code generation}'s inbox store from its next sync on; -1: waits after its current sync. */
    void moveTo(int generation) {
      waiting = false;
      target = generation;
    }

    /** Told to wait, it does (its last sync committed). */
    boolean waiting() {
      return waiting && target < 0;
    }

    /** Its committed inbox cursor in the inbox store on {@code port} (GET .../cursor), -2 when it did not answer. */
    long committed(int port) throws IOException, InterruptedException {
      HttpResponse<String> r = send("GET", port, "/v1/users/" + user + "/devices/" + DEVICE + "/cursor", null);
      return r == null || r.statusCode() != 200 ? -2 : Json.MAPPER.readTree(r.body()).get("seq").asLong();
    }

    /** The message ids received, in order. */
    List<String> received() {
      synchronized (received) {
        return List.copyOf(received);
      }
    }

    int receivedCount() {
      return received.size();
    }

    /** How many of {@link #received} came from generation 0's inbox store (the first ones). */
    int receivedInGeneration0() {
      return receivedInGeneration0.get();
    }

    /** The cursors 409 answers told it to resync from. */
    List<String> resyncs() {
      return List.copyOf(resyncs);
    }

    long syncs() {
      return syncs.get();
    }

    long retries() {
      return retries.get();
    }

    @Override
    public void run() {
      try {
        while (running.get()) {
          int generation = target;
          if (generation < 0) {
            waiting = true;
            LockSupport.parkNanos(RETRY.toNanos());
          } else {
            sync(generation);
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException | IOException | AssertionError e) {
        failure = e;
      }
    }

    private void sync(int generation) throws IOException, InterruptedException {
      int port = ports.get(generation);
      HttpResponse<String> r = send("GET", port, "/v1/users/" + user + "/devices/" + DEVICE + "/sync?limit=500"
          + (cursor == null ? "" : "&after=" + cursor), null);
      if (r == null || retried(r.statusCode())) {
        retry();
        return;
      }
      if (r.statusCode() == 409 && cursor != null && SyncCursor.decode(cursor).generation() != generation) {
        cursor = Json.MAPPER.readTree(r.body()).get("cursor").asText();
        resyncs.add(cursor);
        return;
      }
      if (r.statusCode() != 200) {
        throw new AssertionError(user + ": sync at generation " + generation + " -> " + r.statusCode() + " "
            + r.body());
      }
      syncs.incrementAndGet();
      JsonNode page = Json.MAPPER.readTree(r.body());
      JsonNode entries = page.get("entries");
      for (JsonNode e : entries) {
        received.add(e.get("messageId").asText());
      }
      if (generation == 0) {
        receivedInGeneration0.addAndGet(entries.size());
      }
      String next = page.get("cursor").asText();
      if (!entries.isEmpty()) {
        commit(port, next);
      }
      cursor = next;
      if (!page.get("hasMore").asBoolean()) {
        LockSupport.parkNanos(PAUSE.toNanos());
      }
    }

    /** {@code PUT .../cursor} until accepted: what the phone received is then what it committed. */
    private void commit(int port, String next) throws IOException, InterruptedException {
      while (running.get()) {
        HttpResponse<String> r = send("PUT", port, "/v1/users/" + user + "/devices/" + DEVICE + "/cursor",
            "{\"cursor\":\"" + next + "\"}");
        if (r != null && r.statusCode() == 202) {
          return;
        }
        if (r != null && !retried(r.statusCode())) {
          throw new AssertionError(user + ": commit " + next + " -> " + r.statusCode() + " " + r.body());
        }
        retry();
      }
    }

    private void retry() {
      retries.incrementAndGet();
      LockSupport.parkNanos(RETRY.toNanos());
    }

    /** The answer, or null when the connection failed (the phone retries). */
    private HttpResponse<String> send(String method, int port, String path, String body)
        throws InterruptedException {
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(30));
      if (body != null) {
        b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
      } else {
        b.method(method, HttpRequest.BodyPublishers.noBody());
      }
      try {
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        return null;
      }
    }
  }
}
