package dev.impipe.bench.scenario;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The abuse benchmark's attacker: one ordinary account doing, at once and for a bounded time, the worst of DESIGN
 * "Abuse and quotas" (run in a JVM of its own, like {@link SyncLoad}):
 * <ul>
 *   <li>timeline waits: {@code WAITERS} threads, each in a loop, sync with {@code groupMinSeq=GROUP:Long.MAX} (a
 *       wait that can never be satisfied);
 *   <li>a send flood to a large group (the user is its admin), paced at {@code FLOOD_RATE} requests/s, every tenth a
 *       READ of a group the user is not in;
 *   <li>{@code SOCKETS} WebSocket upgrades under distinct device ids that never read a byte (a fat backlog waits
 *       for each of them);
 *   <li>{@code SLOW_READERS} connections that ask for {@code inbox?limit=1000} of fat entries and never read.
 * </ul>
 * Arguments: {@code HOST PORT TOKEN USER GROUP OTHER_GROUP SECONDS WAITERS FLOOD_RATE SOCKETS SLOW_READERS OUT_FILE}.
 * {@code OUT_FILE} gets one line per request kind and answer: {@code KIND STATUS COUNT} (status -1: an I/O error
 * or a time-out).
 */
public final class AbuseLoad {

  private AbuseLoad() {
  }

  public static void main(String[] args) throws Exception {
    String host = args[0];
    int port = Integer.parseInt(args[1]);
    String token = args[2];
    String user = args[3];
    String group = args[4];
    String otherGroup = args[5];
    long seconds = Long.parseLong(args[6]);
    int waiters = Integer.parseInt(args[7]);
    double floodRate = Double.parseDouble(args[8]);
    int sockets = Integer.parseInt(args[9]);
    int slowReaders = Integer.parseInt(args[10]);
    Path out = Path.of(args[11]);

    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    Map<String, AtomicLong> answers = new ConcurrentHashMap<>();
    URI base = URI.create("http://" + host + ":" + port);
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();

    // Connections that never read: opened first, held to the end.
    List<Socket> held = new ArrayList<>();
    for (int i = 0; i < sockets; i++) {
      held.add(neverRead(host, port, "GET /v1/ws?device=abuse" + i + " HTTP/1.1\r\nHost: " + host + ":" + port
          + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
          + "Sec-WebSocket-Version: 13\r\nAuthorization: " + token + "\r\n\r\n", answers, "socket"));
    }
    for (int i = 0; i < slowReaders; i++) {
      held.add(neverRead(host, port, "GET /v1/users/" + user + "/inbox?limit=1000 HTTP/1.1\r\nHost: " + host + ":"
          + port + "\r\nAuthorization: " + token + "\r\n\r\n", answers, "slow-reader"));
    }

    List<Thread> threads = new ArrayList<>();
    HttpRequest wait = HttpRequest.newBuilder(base.resolve("/v1/users/" + user + "/devices/w/sync?groupMinSeq="
        + group + ":" + Long.MAX_VALUE)).header("Authorization", token).timeout(Duration.ofSeconds(8)).build();
    for (int i = 0; i < waiters; i++) {
      threads.add(daemon(() -> {
        while (System.nanoTime() < end) {
          count(answers, "wait", send(http, wait));
        }
      }));
    }
    threads.add(daemon(() -> {
      long interval = (long) (1e9 / floodRate);
      long due = System.nanoTime();
      for (long n = 0; System.nanoTime() < end; n++) {
        long now = System.nanoTime();
        if (due > now) {
          LockSupport.parkNanos(due - now);
        }
        due += interval;
        boolean read = n % 10 == 9;
        String body = read ? "{\"groupId\":\"" + otherGroup + "\",\"upToSeq\":1}"
            : "{\"groupId\":\"" + group + "\",\"body\":\"spam " + n + "\",\"clientMsgId\":\"flood-" + n + "\"}";
        HttpRequest post = HttpRequest.newBuilder(base.resolve(read ? "/v1/read" : "/v1/messages"))
            .header("Authorization", token).header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(8)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
        count(answers, read ? "non-member-read" : "send", send(http, post));
      }
    }));
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(seconds + 20));
    }
    for (Socket s : held) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing at the end
      }
    }
    Map<String, Long> sorted = new TreeMap<>();
    answers.forEach((k, v) -> sorted.put(k, v.get()));
    StringBuilder text = new StringBuilder();
    sorted.forEach((k, v) -> text.append(k).append(' ').append(v).append('\n'));
    Files.writeString(out, text, StandardCharsets.US_ASCII);
  }

  private static Thread daemon(Runnable body) {
    Thread t = new Thread(body, "abuse");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static int send(HttpClient http, HttpRequest request) {
    try {
      return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private static void count(Map<String, AtomicLong> answers, String kind, int status) {
    answers.computeIfAbsent(kind + " " + status, k -> new AtomicLong()).incrementAndGet();
  }

  /** Opens a connection with a small receive buffer, writes {@code request} and never reads the answer. */
  private static Socket neverRead(String host, int port, String request, Map<String, AtomicLong> answers,
      String kind) {
    Socket socket = new Socket();
    try {
      socket.setReceiveBufferSize(4096);
      socket.connect(new InetSocketAddress(host, port), 5_000);
      OutputStream o = socket.getOutputStream();
      o.write(request.getBytes(StandardCharsets.US_ASCII));
      o.flush();
      count(answers, kind, 0);
    } catch (IOException e) {
      count(answers, kind, -1);
    }
    return socket;
  }
}
